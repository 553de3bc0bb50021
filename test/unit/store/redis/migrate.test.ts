/**
 * `agentmail migrate` both ways between a repository's file store and a private redis-server, as the command runs
 * it: afterwards the old store refuses every command, saying where the mail went and exactly how to point there, so
 * an agent left on it neither gets a message twice nor sends into a store nobody reads; the clean-up it suggests
 * deletes the mail and nothing else; and a mailman of the file store is not taken for the Redis store's.
 */
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, test } from "bun:test";
import { RedisClient } from "bun";
import { existsSync, mkdirSync, readdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { runDoctor } from "../../../../src/actions/doctor.ts";
import { startMailman } from "../../../../src/actions/mailman.ts";
import { createMessage } from "../../../../src/mail/message.ts";
import { claimMailman, releaseMailman } from "../../../../src/mailman/files.ts";
import { openStore } from "../../../../src/store/open.ts";
import { parseServerUrl } from "../../../../src/store/redis/url.ts";
import type { Store } from "../../../../src/store/store.ts";
import { runInProcess } from "../../../support/in-process.ts";
import { RedisServer } from "../../../support/redis-server.ts";
import { tempRepo } from "../../../support/repo.ts";
import { failureOf } from "../../../support/store-contract.ts";
import { freshNamespace } from "./helpers.ts";

let server: RedisServer;
let repo: ReturnType<typeof tempRepo>;
let namespace: string;
const opened: Store[] = [];

beforeAll(async () => {
  server = await RedisServer.start({ password: "migrate-pw-1" });
});
afterAll(async () => {
  await server?.remove();
});
beforeEach(() => {
  repo = tempRepo();
  namespace = freshNamespace("migrate");
});
afterEach(() => {
  for (const store of opened.splice(0)) store.close();
  repo.remove();
});

const fileEnv = () => ({});
// Patient: a loaded machine answers slowly, and these tests are about where the mail goes, not the timeout.
const redisEnv = () => ({ AGENTMAIL_URL: server.url, AGENTMAIL_NAMESPACE: namespace, AGENTMAIL_REDIS_TIMEOUT: "60" });
const display = () => parseServerUrl(server.url).display;

async function storeOf(env: Record<string, string>): Promise<Store> {
  const store = await openStore({ cwd: repo.dir, env });
  opened.push(store);
  return store;
}

async function migrate(args: string[]): Promise<Record<string, unknown>> {
  const env = { AGENTMAIL_NAMESPACE: namespace, AGENTMAIL_REDIS_TIMEOUT: "60" };
  const result = await runInProcess(["migrate", ...args, "--json"], { cwd: repo.dir, env });
  expect({ code: result.code, stderr: result.stderr }).toEqual({ code: 0, stderr: "" });
  expect(result.stdout).not.toContain("migrate-pw-1");
  return JSON.parse(result.stdout);
}

async function takeAll(store: Store, mailbox: string): Promise<string[]> {
  const bodies: string[] = [];
  while (await store.take(mailbox, (message) => void bodies.push(message.message)));
  return bodies;
}

describe("migrate --to: the file store's mail moves to Redis", () => {
  test("the file store then refuses every command, saying to set AGENTMAIL_URL; each message is delivered once", async () => {
    const files = await storeOf(fileEnv());
    for (const body of ["one", "two", "three"]) await files.append(createMessage("alice", "bob", body));
    expect(await files.take("bob", () => {})).toMatchObject({ message: "one" });
    await files.append(createMessage("alice", "bob", "four"));
    const report = await migrate(["--to", server.url]);
    expect(report).toMatchObject({ messages: 4, source_moved: true });

    // An agent without AGENTMAIL_URL: refused, told exactly what to set.
    const refused = await failureOf(openStore({ cwd: repo.dir, env: {} }));
    expect(refused.code).toBe("moved");
    expect(refused.message).toStartWith(`the mail of ${repo.mailDir} moved to ${display()}, namespace ${namespace} (agentmail migrate, `);
    expect(refused.message).toEndWith(
      `; point agentmail there: export AGENTMAIL_URL=${display()} AGENTMAIL_NAMESPACE=${namespace} (with the server's password in the URL)`,
    );
    expect(refused.message).not.toContain("migrate-pw-1");
    expect((await failureOf(files.take("bob", () => {}))).code).toBe("moved");
    expect((await failureOf(files.append(createMessage("alice", "bob", "lost?")))).code).toBe("moved");

    const doctor = await runDoctor({ cwd: repo.dir, env: {} }, false);
    expect(doctor.findings[0]).toMatchObject({ area: "store", status: "problem" });
    expect(doctor.findings[0]!.fix).toStartWith(`export AGENTMAIL_URL=${display()}`);
    // An agent with it gets what was unread, once.
    const redis = await storeOf(redisEnv());
    expect(await takeAll(redis, "bob")).toEqual(["two", "three", "four"]);
  });

  test("its clean-up deletes the mail only; the store in Redis mode still keeps its mailman and bridges there", async () => {
    const files = await storeOf(fileEnv());
    await files.append(createMessage("alice", "bob", "hello"));
    await files.archive("bob", { pick: () => true }, false);
    await files.append(createMessage("alice", "role:triage", "for the role"));
    mkdirSync(join(repo.mailDir, ".bridges", "roo-queue", "architect"), { recursive: true });
    writeFileSync(join(repo.mailDir, ".bridges", "config.json"), '{"bridges":[]}\n');
    writeFileSync(join(repo.mailDir, ".bridges", "roo-queue", "architect", "0000000001_Ab3dE5gH.md"), "queued\n");
    const report = await migrate(["--to", server.url]);
    const removal = Bun.spawnSync(["sh", "-c", String(report.remove_source)]);
    expect(removal.exitCode).toBe(0);
    expect(readdirSync(repo.mailDir).sort()).toEqual([".agentmail-store", ".bridges", ".moved"]);
    expect(existsSync(join(repo.mailDir, ".bridges", "roo-queue", "architect", "0000000001_Ab3dE5gH.md"))).toBe(true);
    const bridges = await runInProcess(["bridge", "list"], { cwd: repo.dir, env: redisEnv() });
    expect({ code: bridges.code, stderr: bridges.stderr }).toEqual({ code: 0, stderr: "" });
  });

  test("--keep-source leaves the file store live", async () => {
    const files = await storeOf(fileEnv());
    await files.append(createMessage("alice", "bob", "kept"));
    expect(await migrate(["--to", server.url, "--keep-source"])).toMatchObject({ source_moved: false, remove_source: null });
    expect(await takeAll(await storeOf(fileEnv()), "bob")).toEqual(["kept"]);
  });
});

describe("migrate --from: the mail moves back to the file store", () => {
  test("Redis then refuses every command, saying to unset AGENTMAIL_URL; what was read on Redis stays read", async () => {
    const files = await storeOf(fileEnv());
    for (const body of ["one", "two"]) await files.append(createMessage("alice", "bob", body));
    await migrate(["--to", server.url]);
    const redis = await storeOf(redisEnv());
    expect(await redis.take("bob", () => {})).toMatchObject({ message: "one" });
    await redis.append(createMessage("carol", "bob", "sent on Redis"));

    const report = await migrate(["--from", server.url]);
    expect(report).toMatchObject({ messages: 1, already: 2, source_moved: true });
    const onRedis = await storeOf(redisEnv());
    for (const refused of [
      onRedis.take("bob", () => {}),
      onRedis.append(createMessage("alice", "bob", "lost?")),
      onRedis.mail("bob"),
      onRedis.statuses(),
      onRedis.touch({ name: "bob", host: "h", pane: "%1" }),
    ]) {
      const error = await failureOf(refused);
      expect(error.code).toBe("moved");
      expect(error.message).toContain(`the mail of ${display()}, namespace ${namespace} moved to ${repo.mailDir} (agentmail migrate, `);
      expect(error.message).toEndWith("; point agentmail there: unset AGENTMAIL_URL");
    }
    const doctor = await runDoctor({ cwd: repo.dir, env: redisEnv() }, false);
    expect(doctor.findings[0]).toMatchObject({ area: "store", status: "problem", fix: "unset AGENTMAIL_URL" });
    expect(doctor.findings[0]!.message).toEndWith("; every command here fails");
    // Back on the file store: its note is gone, and only what nobody read is delivered.
    expect(await takeAll(await storeOf(fileEnv()), "bob")).toEqual(["two", "sent on Redis"]);

    // Redis's clean-up deletes every key of the namespace but the note.
    expect(String(report.remove_source)).toEndWith("# with REDISCLI_AUTH set to the server's password");
    const removal = Bun.spawnSync(["sh", "-c", String(report.remove_source)], { env: { ...process.env, REDISCLI_AUTH: "migrate-pw-1" } });
    expect(removal.exitCode).toBe(0);
    const admin = new RedisClient(server.url);
    try {
      const keys = (await admin.send("KEYS", [`agentmail:{${namespace}}:*`])) as string[];
      expect(keys).toEqual([`agentmail:{${namespace}}:moved`]);
    } finally {
      admin.close();
    }
  });
});

describe("the mailman serves one store", () => {
  test("after switching to Redis, the file store's mailman is not taken for the Redis one", async () => {
    const root = repo.mailDir;
    await storeOf(fileEnv()).then((files) => files.append(createMessage("alice", "bob", "hello")));
    await claimMailman(root);
    try {
      const report = await runDoctor({ cwd: repo.dir, env: redisEnv() }, false);
      const mailman = report.findings.filter((finding) => finding.area === "mailman");
      expect(mailman).toEqual([
        {
          area: "mailman",
          status: "problem",
          message: expect.stringContaining(`the mailman here serves ${root} (pid ${process.pid} on `),
          fix: "agentmail mailman stop && agentmail mailman --daemon",
        },
      ]);
      const refused = await failureOf(startMailman({ cwd: repo.dir, env: redisEnv() }, { intervalSeconds: 60, sweepSeconds: 5 }));
      expect(refused.message).toBe(
        `a mailman already runs here for another store, ${root} (pid ${process.pid}); stop it with 'agentmail mailman stop', then start this store's`,
      );
    } finally {
      releaseMailman(root);
    }
  });
});
