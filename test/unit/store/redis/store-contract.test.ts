/** The Store contract (test/support/store-contract.ts) on the Redis store, against a private redis-server. */
import { afterAll, beforeAll } from "bun:test";
import { RedisServer } from "../../../support/redis-server.ts";
import { storeContract } from "../../../support/store-contract.ts";
import { freshNamespace, storeAt } from "./helpers.ts";

let server: RedisServer;

beforeAll(async () => {
  server = await RedisServer.start();
});

afterAll(async () => {
  await server?.remove();
});

storeContract({
  freshPlace: (label) => freshNamespace(label),
  open: (namespace) => storeAt(server.url, namespace),
});
