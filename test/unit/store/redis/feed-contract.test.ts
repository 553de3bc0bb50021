/** The feed contract (test/support/feed-contract.ts) on the Redis store, against a private redis-server. */
import { afterAll, beforeAll } from "bun:test";
import { feedContract } from "../../../support/feed-contract.ts";
import { RedisServer } from "../../../support/redis-server.ts";
import { freshNamespace, storeAt } from "./helpers.ts";

let server: RedisServer;

beforeAll(async () => {
  server = await RedisServer.start();
});

afterAll(async () => {
  await server?.remove();
});

feedContract({
  freshPlace: (label) => freshNamespace(label),
  open: (namespace) => storeAt(server.url, namespace),
});
