/**
 * Progress of the bulk commands (migrate here; cleanup, archive and bridge sync use the same line) as a user sees
 * it: on a terminal (a pty, through `script`), a bar redrawn in place on stderr and cleared before the summary; in a
 * pipe, nothing but the summary, and `--json` the same document either way. No colour with NO_COLOR.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { BINARY } from "../support/e2e.ts";
import { RedisServer } from "../support/redis-server.ts";
import { tempRepo } from "../support/repo.ts";

let redis: RedisServer;
let repo: ReturnType<typeof tempRepo>;

beforeAll(async () => {
  redis = await RedisServer.start();
  repo = tempRepo();
  mkdirSync(repo.mailDir, { recursive: true });
  const lines = Array.from({ length: 2_000 }, (_, n) =>
    JSON.stringify({
      id: `P${String(n).padStart(7, "0")}`,
      from: "alice",
      to: "bob",
      message: `m ${n}`,
      read_flag: false,
      created_at: "2026-01-01T00:00:00.000Z",
    }),
  );
  writeFileSync(join(repo.mailDir, "bob.jsonl"), lines.join("\n") + "\n");
});
afterAll(async () => {
  await redis.remove();
  repo.remove();
});

function environment(extra: Record<string, string> = {}): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [key, value] of Object.entries(process.env))
    if (value !== undefined && !key.startsWith("TMUX") && key !== "NO_COLOR") env[key] = value;
  return { ...env, ...extra };
}

/** Runs the binary with stderr on a pty (`script`), stdout and stderr both arriving on the pty's one stream. */
function onTerminal(args: string[], env: Record<string, string>): { code: number; text: string } {
  const command = [BINARY, ...args].map((word) => `'${word.replaceAll("'", `'\\''`)}'`).join(" ");
  const run = Bun.spawnSync(["script", "-q", "-e", "-c", command, "/dev/null"], { env, cwd: repo.dir, stdin: "ignore" });
  return { code: run.exitCode, text: run.stdout.toString() };
}

describe("migrate's progress", () => {
  test("in a pipe: no progress on stderr, only the summary on stdout", () => {
    const run = Bun.spawnSync([BINARY, "migrate", "--to", redis.url, "--keep-source"], {
      env: environment({ AGENTMAIL_NAMESPACE: "pipe" }),
      cwd: repo.dir,
      stdin: "ignore",
    });
    expect({ code: run.exitCode, stderr: run.stderr.toString() }).toEqual({ code: 0, stderr: "" });
    expect(run.stdout.toString()).toMatch(/^copied 2000 messages in 1 mailbox .* in \d+\.\d s \([\d,]+ messages\/s\); 0 already there\n/);
  });

  test("on a terminal: a bar on stderr, redrawn in place and cleared before the summary", () => {
    const run = onTerminal(["migrate", "--to", redis.url, "--keep-source"], environment({ AGENTMAIL_NAMESPACE: "tty" }));
    expect(run.code).toBe(0);
    expect(run.text).toStartWith("\rmigrate 0 mailboxes, 0 messages, 0/s\u001b[K");
    // The bar appears once the number of mailboxes is known.
    expect(run.text).toMatch(/\rmigrate \[\u001b\[36m-+\u001b\[39m\] 0\/1 mailboxes, 0 messages, [\d,]+\/s\u001b\[K/);
    expect(run.text).toContain("\r\u001b[Kcopied 2000 messages in 1 mailbox");
  });

  test("on a terminal with NO_COLOR: the bar has no colour; with --json the document is the same as in a pipe", () => {
    const plain = onTerminal(["migrate", "--to", redis.url, "--keep-source"], environment({ AGENTMAIL_NAMESPACE: "plain", NO_COLOR: "1" }));
    expect(plain.text).toContain("\rmigrate [---");
    expect(plain.text).not.toContain("\u001b[36m");
    const json = onTerminal(["migrate", "--to", redis.url, "--keep-source", "--json"], environment({ AGENTMAIL_NAMESPACE: "json" }));
    const document = json.text.slice(json.text.indexOf("{"));
    expect(JSON.parse(document)).toMatchObject({ messages: 2_000, mailboxes: 1, source_moved: false });
  });
});

describe("cleanup's and bridge sync's progress", () => {
  test("cleanup: on a terminal a bar over the mailboxes; in a pipe only its report", () => {
    const env = environment();
    const tty = onTerminal(["cleanup", "--read-hours", "0", "--dry-run"], env);
    expect(tty.code).toBe(0);
    expect(tty.text).toMatch(/\rcleanup \[\u001b\[36m-+\u001b\[39m\] 0\/1 mailboxes, 0 MB read, [\d,]+\/s\u001b\[K/);
    // Cleared before anything else is written (here, a warning: no tmux), then the report.
    expect(tty.text).toMatch(/\r\u001b\[K[^\r]*warning:[^\n]*\n(\r\n)?Nothing to clean up\r\n$/);
    const pipe = Bun.spawnSync([BINARY, "cleanup", "--read-hours", "0", "--dry-run"], { env, cwd: repo.dir, stdin: "ignore" });
    expect({ code: pipe.exitCode, stdout: pipe.stdout.toString() }).toEqual({ code: 0, stdout: "Nothing to clean up\n" });
    expect(pipe.stderr.toString()).not.toContain("cleanup [");
  });

  test("bridge sync: on a terminal a bar over the files waiting; in a pipe only its report", () => {
    const env = environment();
    expect(Bun.spawnSync([BINARY, "bridge", "add", "feat124"], { env, cwd: repo.dir }).exitCode).toBe(0);
    const tty = onTerminal(["bridge", "sync"], env);
    expect(tty.code).toBe(0);
    expect(tty.text).toStartWith("\rbridge sync 0 files, 0/s\u001b[K");
    const pipe = Bun.spawnSync([BINARY, "bridge", "sync"], { env, cwd: repo.dir, stdin: "ignore" });
    expect(pipe.exitCode).toBe(0);
    expect(pipe.stderr.toString()).toBe("");
  });
});
