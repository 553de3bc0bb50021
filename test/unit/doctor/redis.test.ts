/** `doctor`'s checks of a Redis store, against private redis-servers set up the ways a team might run one. */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { RedisClient } from "bun";
import { redisFindings } from "../../../src/doctor/redis.ts";
import { RedisServer } from "../../support/redis-server.ts";
import { tempRepo } from "../../support/repo.ts";
import { freshNamespace, storeAt } from "../store/redis/helpers.ts";

let server: RedisServer;
let relaxed: RedisServer;

beforeAll(async () => {
  server = await RedisServer.start({ password: "doctor-pw-1" });
  relaxed = await RedisServer.start({ appendfsync: "everysec" });
});

afterAll(async () => {
  await server?.remove();
  await relaxed?.remove();
});

/** Patient: a loaded machine answers slowly; an unreachable server still fails at once (no socket, no wait). */
const place = (env: Record<string, string>) => ({ cwd: "/", env: { AGENTMAIL_REDIS_TIMEOUT: "60", ...env } });
const summary = (findings: { status: string; message: string }[]) => findings.map((finding) => `${finding.status}: ${finding.message}`);

describe("doctor on a Redis store", () => {
  test("a healthy server: where, which namespace, how many agents, the version, and fsync on every write", async () => {
    const namespace = freshNamespace("doctor");
    const store = storeAt(server.url, namespace);
    await store.touch({ name: "bob", host: "h", pane: "%1" });
    store.close();
    const findings = await redisFindings(place({ AGENTMAIL_URL: server.url, AGENTMAIL_NAMESPACE: namespace }));
    const lines = summary(findings);
    expect(lines[0]).toBe(
      `ok: the Redis store at redis+unix://${server.socket}, namespace ${namespace} (from AGENTMAIL_NAMESPACE): 1 agent registered`,
    );
    expect(lines[1]).toMatch(/^ok: the mail server runs Redis \d+\.\d+/);
    expect(lines[2]).toBe("ok: append-only file on, fsynced on every write: nothing acknowledged is lost");
    expect(lines.join("\n")).not.toContain("doctor-pw-1");
  });

  test("everysec is noted with its risk; an append-only file turned off is a problem with the fix", async () => {
    const url = relaxed.url;
    const everysec = summary(await redisFindings(place({ AGENTMAIL_URL: url, AGENTMAIL_NAMESPACE: "n" })));
    expect(everysec[2]).toStartWith("note: append-only file on, appendfsync everysec: a power cut");
    const admin = new RedisClient(url);
    try {
      await admin.send("CONFIG", ["SET", "appendfsync", "no"]);
      expect(summary(await redisFindings(place({ AGENTMAIL_URL: url, AGENTMAIL_NAMESPACE: "n" })))[2]).toContain("appendfsync no");
      await admin.send("CONFIG", ["SET", "appendonly", "no"]);
      const off = await redisFindings(place({ AGENTMAIL_URL: url, AGENTMAIL_NAMESPACE: "n" }));
      expect(off[2]).toMatchObject({
        status: "problem",
        fix: "redis-cli CONFIG SET appendonly yes (and appendonly yes in its config file)",
      });
      expect(off[2]!.message).toContain("append-only file is off");
    } finally {
      await admin.send("CONFIG", ["SET", "appendonly", "yes"]);
      await admin.send("CONFIG", ["SET", "appendfsync", "everysec"]);
      admin.close();
    }
  });

  test("a user refused INFO and CONFIG: what cannot be read is said, the rest is checked", async () => {
    const admin = new RedisClient(server.url);
    try {
      const grant = ["SETUSER", "limited", "reset", "on", ">limited-pw-1", "~agentmail:*", "-@all", "+hello", "+hlen"];
      expect(await admin.send("ACL", grant)).toBe("OK");
      const url = `redis+unix://limited:limited-pw-1@${server.socket}`;
      const lines = summary(await redisFindings(place({ AGENTMAIL_URL: url, AGENTMAIL_NAMESPACE: "n" })));
      expect(lines[0]).toContain("0 agents registered");
      expect(lines[1]).toStartWith("note: the server's version cannot be read");
      expect(lines[2]).toStartWith("note: persistence cannot be read (INFO refused); its fsync policy cannot be read");
      expect(lines.join("\n")).not.toContain("limited-pw-1");
    } finally {
      admin.close();
    }
  });

  test("a server that cannot be reached, or no namespace, is a problem that says what to do", async () => {
    const down = `redis+unix://:doctor-pw-1@${server.dir}/nothing.sock`;
    const [unreachable] = await redisFindings(place({ AGENTMAIL_URL: down, AGENTMAIL_NAMESPACE: "n" }));
    expect(unreachable).toMatchObject({ status: "problem", fix: "start the server, or point AGENTMAIL_URL at one that runs" });
    expect(unreachable!.message).toBe(
      `cannot reach the mail server at redis+unix://${server.dir}/nothing.sock: there is no socket at ${server.dir}/nothing.sock (is redis-server running?)`,
    );
    const [noNamespace] = await redisFindings({ cwd: server.dir, env: { AGENTMAIL_URL: server.url } });
    expect(noNamespace).toMatchObject({ status: "problem" });
    expect(noNamespace!.message).toContain("set AGENTMAIL_NAMESPACE");
  });
});

describe("agentmail doctor with AGENTMAIL_URL", () => {
  test("checks the server in place of the file store, then tmux, the mailman and the hooks", async () => {
    const { runDoctor } = await import("../../../src/actions/doctor.ts");
    const namespace = freshNamespace("doctor-action");
    const repo = tempRepo();
    try {
      const report = await runDoctor(
        {
          cwd: repo.dir,
          env: { AGENTMAIL_URL: server.url, AGENTMAIL_NAMESPACE: namespace, HOME: repo.dir, AGENTMAIL_REDIS_TIMEOUT: "60" },
        },
        false,
      );
      expect(report.store).toBe(`redis+unix://${server.socket}`);
      expect(report.findings[0]?.message).toStartWith(`the Redis store at redis+unix://${server.socket}, namespace ${namespace}`);
      expect(report.findings.map((finding) => finding.area)).toEqual(expect.arrayContaining(["store", "tmux", "mailman", "hooks"]));
      expect(JSON.stringify(report)).not.toContain("doctor-pw-1");
    } finally {
      repo.remove();
    }
  });

  test("a server that cannot be reached is a problem, and the other checks still run", async () => {
    const { runDoctor } = await import("../../../src/actions/doctor.ts");
    const report = await runDoctor(
      { cwd: "/", env: { AGENTMAIL_URL: "redis+unix:///nonexistent/redis.sock", AGENTMAIL_NAMESPACE: "x" } },
      false,
    );
    expect(report.ok).toBe(false);
    expect(report.store).toBe("redis+unix:///nonexistent/redis.sock");
    expect(report.findings[0]).toMatchObject({ area: "store", status: "problem" });
    expect(report.findings[0]?.message).toStartWith("cannot reach the mail server at redis+unix:///nonexistent/redis.sock");
    expect(report.findings.some((finding) => finding.area === "hooks")).toBe(true);
  });
});
