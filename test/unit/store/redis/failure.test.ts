/**
 * The Redis store when things go wrong: a server that is down, silent or frozen fails within the timeout with a
 * message that names the server without its password; a password is never shown; what the server acknowledged
 * survives a crash with AOF `appendfsync always`; a lost connection leaves the message for the next receive.
 * Also the other transports: TCP loopback, and a database selected on a socket.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { RedisClient } from "bun";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { MailServerUnreachable } from "../../../../src/store/server.ts";
import { RedisServer } from "../../../support/redis-server.ts";
import { failureOf } from "../../../support/store-contract.ts";
import { appendAll, drain, freshNamespace, mail, storeAt } from "./helpers.ts";

const PASSWORD = "correct-horse-battery";
let server: RedisServer;

beforeAll(async () => {
  server = await RedisServer.start({ tcp: true, password: PASSWORD });
});

afterAll(async () => {
  await server?.remove();
});

function expectRedacted(error: Error): void {
  expect(error.message).not.toContain(PASSWORD);
  expect(error.stack ?? "").not.toContain(PASSWORD);
  expect(Bun.inspect(error)).not.toContain(PASSWORD);
}

describe("transports", () => {
  test("TCP loopback with a password: send and take", async () => {
    const store = storeAt(server.tcpUrl, freshNamespace("tcp"));
    try {
      expect(store.location).toBe(`redis://127.0.0.1:${server.port}`);
      await store.append(mail("alice", "bob", "over tcp"));
      expect(await drain(store, "bob")).toEqual(["over tcp"]);
    } finally {
      store.close();
    }
  });

  test("a database named on a socket URL is the one the mail goes to", async () => {
    const namespace = freshNamespace("db");
    const store = storeAt(`${server.url}?db=3`, namespace);
    const raw = new RedisClient(server.url);
    try {
      await store.append(mail("alice", "bob", "in db 3"));
      const key = `agentmail:{${namespace}}:mail:bob`;
      expect(await raw.send("EXISTS", [key])).toBe(0);
      await raw.send("SELECT", ["3"]);
      expect(await raw.send("EXISTS", [key])).toBe(1);
      expect(await drain(store, "bob")).toEqual(["in db 3"]);
    } finally {
      raw.close();
      store.close();
    }
  });
});

describe("passwords", () => {
  test("a wrong password fails with what to check, and neither it nor the right one appears anywhere", async () => {
    const wrong = `wrong-${PASSWORD}`;
    const urls = [server.url, server.tcpUrl].map((url) => url.replace(encodeURIComponent(PASSWORD), wrong));
    for (const url of urls) {
      const store = storeAt(url, freshNamespace("wrong-password"));
      const error = await failureOf(store.take("bob", () => {}));
      store.close();
      expect(error).toBeInstanceOf(MailServerUnreachable);
      expect(error.message).toStartWith("cannot reach the mail server at ");
      expect(error.message).toContain("check the user and password in AGENTMAIL_URL");
      expect(error.message).not.toContain(wrong);
      expectRedacted(error);
    }
  });

  test("no password where one is needed says so", async () => {
    const store = storeAt(`redis+unix://${server.socket}`, freshNamespace("no-password"));
    const error = await failureOf(store.countUnread("bob"));
    store.close();
    expect(error.message).toContain(`cannot reach the mail server at redis+unix://${server.socket}: the server refused to let us in`);
  });

  test("the store's location and an inspected store never show the password", () => {
    const store = storeAt(server.url, freshNamespace("inspect"));
    expect(store.location).toBe(`redis+unix://${server.socket}`);
    expect(Bun.inspect(store)).not.toContain(PASSWORD);
    expect(JSON.stringify(store)).not.toContain(PASSWORD);
    store.close();
  });
});

/** The README's ACL line: a user limited to agentmail's keys and the commands the store sends or its scripts run. */
const ACL_COMMANDS =
  "+hello +auth +ping +select +role +wait +eval +evalsha +time +get +set +del +xadd +xrange +xrevrange +xread +xdel +xlen " +
  "+hget +hset +hdel +hexists +hincrby +hkeys +hgetall +hvals +hlen +exists +sadd +srem +smembers";

describe("a user with only the permissions the README lists", () => {
  test("can do everything the store does, and a missing permission is named with what to do", async () => {
    const admin = new RedisClient(server.url);
    const url = `redis+unix://agentmail:mail-pw-1@${server.socket}`;
    const store = storeAt(url, freshNamespace("acl"));
    try {
      const grant = ["SETUSER", "agentmail", "reset", "on", ">mail-pw-1", "~agentmail:*", "resetchannels", "-@all"];
      grant.push(...ACL_COMMANDS.split(" "));
      expect(await admin.send("ACL", grant)).toBe("OK");
      const watch = await store.watch(["bob"]);
      const sent = mail("alice", "bob", "limited");
      await store.append(sent);
      await watch.changed(30_000);
      watch.close();
      expect(await store.take("bob", () => {}, { prefer: () => true })).toMatchObject({ id: sent.id });
      await store.append(mail("alice", "bob", "unread"));
      expect(await store.unread("bob")).toHaveLength(1);
      expect(await store.markRead("bob", sent.id)).toBeNull();
      expect(await store.find("bob", sent.id)).toMatchObject({ archived: false });
      expect(await store.mailboxes()).toEqual(["bob"]);
      expect(await store.roleQueues()).toEqual([]);
      expect(await store.touch({ name: "bob", host: "h", pane: "%1" }, 60_000)).toEqual({ accepted: true });
      await store.writeStatus({ name: "bob", status: "work", pane: "%1" });
      expect((await store.statuses()).map((agent) => agent.name)).toEqual(["bob"]);
      expect(await store.status("bob")).toMatchObject({ status: "work" });
      await store.removeStatus("bob");
      await store.updateMemberships("groups", (lists) => lists.set("team", ["bob"]));
      expect((await store.memberships("groups")).get("team")).toEqual(["bob"]);
      expect(await store.archive("bob", { pick: () => true }, false)).toMatchObject({ removed: true });
      expect(await store.archives()).toEqual(["bob"]);
      expect(await store.mail("bob")).toHaveLength(2);
      expect((await store.sentBy("alice")).map((record) => record.message.id)).toContain(sent.id);
      expect(await store.purgeArchive("bob", () => true, false)).toHaveLength(2);
      // replicas= (WAIT) and a Sentinel's primary check (ROLE): this server has no replica, so the WAIT falls short.
      const waiting = storeAt(`${url}?replicas=1&replica-timeout=20`, freshNamespace("acl-wait"));
      const short = await failureOf(waiting.append(mail("alice", "bob", "replicated?")));
      waiting.close();
      expect(short.message).toContain("made the change, but 0 of the 1 replica it must reach");
      const limited = new RedisClient(`redis+unix://agentmail:mail-pw-1@localhost${server.socket}`);
      expect(((await limited.send("ROLE", [])) as string[])[0]).toBe("master");
      limited.close();

      expect(await admin.send("ACL", ["SETUSER", "agentmail", "-time"])).toBe("OK");
      await store.append(mail("alice", "bob", "again"));
      const error = await failureOf(store.take("bob", () => {}));
      expect(error.message).toContain("the user in AGENTMAIL_URL lacks a permission; grant it or use another user");
    } finally {
      store.close();
      admin.close();
    }
  });
});

describe("a server that cannot be reached", () => {
  test("a stopped server fails the command at once, naming the URL without the password", async () => {
    const down = await RedisServer.start({ tcp: true, password: PASSWORD });
    const socketUrl = down.url;
    const tcpUrl = down.tcpUrl;
    await down.remove();
    const viaSocket = storeAt(socketUrl, freshNamespace("down"), { timeoutMs: 2_000 });
    const socketError = await failureOf(viaSocket.append(mail("alice", "bob", "lost?")));
    viaSocket.close();
    expect(socketError.message).toBe(
      `cannot reach the mail server at redis+unix://${down.socket}: there is no socket at ${down.socket} (is redis-server running?)`,
    );
    expect(socketError.code).toBe("io");
    expect(socketError.exitCode).toBe(1);
    const viaTcp = storeAt(tcpUrl, freshNamespace("down"), { timeoutMs: 2_000 });
    const tcpError = await failureOf(viaTcp.take("bob", () => {}));
    viaTcp.close();
    expect(tcpError.message).toBe(
      `cannot reach the mail server at redis://127.0.0.1:${down.port}: the connection was refused or closed (is redis-server running?)`,
    );
    expectRedacted(tcpError);
  });

  test("a server that accepts and never answers fails within the timeout", async () => {
    const dir = mkdtempSync(join(tmpdir(), "agentmail-silent-"));
    const socket = join(dir, "silent.sock");
    const silent = Bun.listen({ unix: socket, socket: { data() {} } });
    try {
      const store = storeAt(`redis+unix://:${PASSWORD}@${socket}`, freshNamespace("silent"), { timeoutMs: 300 });
      const error = await failureOf(store.countUnread("bob"));
      store.close();
      expect(error.message).toBe(
        `cannot reach the mail server at redis+unix://${socket}: no answer within 300 ms (AGENTMAIL_REDIS_TIMEOUT sets how long to wait)`,
      );
      expectRedacted(error);
    } finally {
      silent.stop(true);
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test("a server that freezes mid-conversation fails the command within the timeout; the next one reconnects", async () => {
    const frozen = await RedisServer.start();
    // Long enough that the calls meant to succeed (before the freeze, after the thaw) do on a busy machine.
    const store = storeAt(frozen.url, freshNamespace("frozen"), { timeoutMs: 2_000 });
    try {
      await store.append(mail("alice", "bob", "before the freeze"));
      frozen.freeze();
      const error = await failureOf(store.countUnread("bob"));
      const why = "no answer to HGET within 2 s (AGENTMAIL_REDIS_TIMEOUT sets how long to wait)";
      expect(error.message).toBe(`cannot reach the mail server at redis+unix://${frozen.socket}: ${why}`);
      frozen.thaw();
      expect(await store.countUnread("bob")).toBe(1);
    } finally {
      store.close();
      await frozen.remove();
    }
  });

  test("a send whose answer never comes says the message may have been stored, names it, and it was", async () => {
    const frozen = await RedisServer.start();
    const store = storeAt(frozen.url, freshNamespace("maybe"), { timeoutMs: 500 });
    try {
      await store.append(mail("alice", "bob", "connected"));
      // The server takes the next send into its socket, and runs it only when it thaws: after the send gave up.
      frozen.freeze();
      const unsure = mail("alice", "bob", "sent into a frozen server");
      const error = await failureOf(store.append(unsure));
      expect(error.message).toBe(
        `message ${unsure.id} may have been stored: cannot reach the mail server at redis+unix://${frozen.socket}: ` +
          "no answer to EVALSHA within 500 ms (AGENTMAIL_REDIS_TIMEOUT sets how long to wait); check 'agentmail sent' for it before sending it again",
      );
      expect(error.wordedFor("mcp")).toEndWith("; call the sent tool to check for it before sending it again");
      frozen.thaw();
      expect(await drain(store, "bob")).toEqual(["connected", "sent into a frozen server"]);
    } finally {
      frozen.thaw();
      store.close();
      await frozen.remove();
    }
  });

  test("a server error says which command was refused and what to check", async () => {
    const namespace = freshNamespace("wrongtype");
    const raw = new RedisClient(server.url);
    const store = storeAt(server.url, namespace);
    try {
      await raw.send("SET", [`agentmail:{${namespace}}:unread`, "not a hash"]);
      const error = await failureOf(store.countUnread("bob"));
      expect(error.message).toStartWith(`the mail server at redis+unix://${server.socket} refused HGET: WRONGTYPE`);
      const scripted = await failureOf(store.append(mail("alice", "bob", "x")));
      expect(scripted.message).toContain("refused EVAL");
    } finally {
      raw.close();
      store.close();
    }
  });

  test("a closed store refuses further commands", async () => {
    const store = storeAt(server.url, freshNamespace("closed"));
    await store.countUnread("bob");
    store.close();
    const error = await failureOf(store.countUnread("bob"));
    expect(error.message).toContain("the connection is closed");
  });
});

describe("restarts", () => {
  test("nothing acknowledged is lost when the server is killed between send and receive (AOF, appendfsync always)", async () => {
    const crashing = await RedisServer.start();
    const namespace = freshNamespace("restart");
    try {
      const before = storeAt(crashing.url, namespace);
      for (let i = 0; i < 50; i++) await before.append(mail("alice", "bob", `m${i}`));
      for (let i = 0; i < 20; i++) await before.take("bob", () => {});
      before.close();
      await crashing.restart();
      const after = storeAt(crashing.url, namespace);
      try {
        expect(await after.countUnread("bob")).toBe(30);
        expect(await drain(after, "bob")).toEqual(Array.from({ length: 30 }, (_, i) => `m${i + 20}`));
        const history = await after.mail("bob");
        expect(history).toHaveLength(50);
        expect(history.every(({ message }) => message.read_flag === true && typeof message.read_at === "string")).toBe(true);
      } finally {
        after.close();
      }
    } finally {
      await crashing.remove();
    }
  });

  test("a receive whose connection drops before its mark marks it on the server back from a restart: shown once", async () => {
    const crashing = await RedisServer.start();
    const store = storeAt(crashing.url, freshNamespace("dropped"), { timeoutMs: 10_000 });
    try {
      await appendAll(store, [mail("alice", "bob", "first"), mail("alice", "bob", "second")]);
      const shown: string[] = [];
      const taken = await store.take("bob", async (message) => {
        shown.push(message.message);
        await crashing.restart();
      });
      expect(taken?.message).toBe("first");
      expect(await store.countUnread("bob")).toBe(1);
      expect(await drain(store, "bob")).toEqual(["second"]);
      expect(shown).toEqual(["first"]);
    } finally {
      store.close();
      await crashing.remove();
    }
  });

  test("a receive whose mark cannot reach the server in time fails; the same store marks it once the server is back", async () => {
    const crashing = await RedisServer.start();
    const store = storeAt(crashing.url, freshNamespace("dropped-long"), { timeoutMs: 300 });
    try {
      await appendAll(store, [mail("alice", "bob", "first"), mail("alice", "bob", "second")]);
      const shown: string[] = [];
      const lost = await failureOf(
        store.take("bob", async (message) => {
          shown.push(message.message);
          await crashing.kill();
        }),
      );
      expect(lost).toBeInstanceOf(MailServerUnreachable);
      expect(lost.message).toContain("still so after trying again");
      await crashing.launch();
      expect(shown).toEqual(["first"]);
      expect(await store.countUnread("bob")).toBe(2);
      // The next take first marks what was shown: "first" is not shown twice by this process.
      expect(await drain(store, "bob")).toEqual(["second"]);
      expect(await store.countUnread("bob")).toBe(0);
    } finally {
      store.close();
      await crashing.remove();
    }
  });

  test("a showing that fails while the server is away leaves its message for the next take", async () => {
    const crashing = await RedisServer.start();
    const store = storeAt(crashing.url, freshNamespace("release-lost"), { timeoutMs: 2_000 });
    try {
      await store.append(mail("alice", "bob", "only"));
      const failure = new Error("terminal gone");
      const shown = store.take("bob", async () => {
        await crashing.kill();
        throw failure;
      });
      await expect(shown).rejects.toBe(failure);
      await crashing.launch();
      expect(await drain(store, "bob")).toEqual(["only"]);
    } finally {
      store.close();
      await crashing.remove();
    }
  });
});
