/**
 * `watch --json`'s stream (src/watch/once.ts) when the store stops answering: a private redis-server stopped under a
 * room streaming from it. The stream says so once, keeps going, says when the store answers again, and streams what
 * was sent after (the end-to-end run of the binary: test/scenarios/redis-hosts.test.ts).
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { createMessage } from "../../../src/mail/message.ts";
import { setSink } from "../../../src/output/streams.ts";
import { Room } from "../../../src/room/room.ts";
import { streamEvents } from "../../../src/watch/once.ts";
import { RedisServer } from "../../support/redis-server.ts";
import { roomFacts } from "../../support/room-world.ts";
import { waitFor } from "../../support/workflow.ts";
import { freshNamespace, storeAt } from "../store/redis/helpers.ts";

let server: RedisServer;

beforeAll(async () => {
  server = await RedisServer.start();
});

afterAll(async () => {
  await server?.remove();
});

test("a server restarting under the stream: each reason said once, said again when it answers, and the stream goes on", async () => {
  const namespace = freshNamespace("stream");
  // A short timeout: a look at the server away fails at once instead of waiting for it.
  const store = storeAt(server.url, namespace, { timeoutMs: 200 });
  const sender = storeAt(server.url, namespace, { timeoutMs: 60_000 });
  const room = await Room.open(store, { human: null, host: "here", facts: roomFacts() });
  let out = "";
  const said: string[] = [];
  setSink({ stdout: (chunk) => void (out += chunk), stderr: () => {} });
  let stop = () => {};
  const stopped = new Promise<void>((resolve) => {
    stop = resolve;
  });
  const streaming = streamEvents(room, stopped, 50, (message) => said.push(message));
  try {
    await server.stop();
    await waitFor("the stream to say it cannot read", () => said.length > 0);
    await server.launch();
    await waitFor("the stream to say the store answers again", () => said.includes("the mail store answers again"), 120_000);
    const message = createMessage("alice", "bob", "after the restart");
    await sender.append(message);
    await waitFor("the mail event", () => out.includes(`"id":"${message.id}"`));
    expect(said[0]).toStartWith("cannot read the mail store: cannot reach the mail server at ");
    expect(said[0]).toEndWith("; will retry");
    // Each reason once, however many looks fail with it.
    expect(said.filter((line, i) => i > 0 && line === said[i - 1])).toEqual([]);
  } finally {
    stop();
    await streaming;
    setSink(null);
    room.close();
    sender.close();
  }
});
