import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { runInProcess } from "../support/in-process.ts";
import { tempRepo } from "../support/repo.ts";
import { TmuxServer } from "../support/tmux-server.ts";

let repo: ReturnType<typeof tempRepo>;
let server: TmuxServer;

beforeAll(() => {
  repo = tempRepo();
  server = TmuxServer.start(["alice", "bob smith", "reviewer"], repo.dir);
});
afterAll(() => {
  server.stop();
  repo.remove();
});

const as = (name: string) => ({ env: { TMUX: server.agent(name).env.TMUX, TMUX_PANE: server.agent(name).env.TMUX_PANE }, cwd: repo.dir });

describe("dispatcher", () => {
  test("--help and no command print help on stdout with exit 0", async () => {
    for (const argv of [[], ["--help"], ["send", "--help"], ["receive", "-h"]]) {
      const run = await runInProcess(argv);
      expect(run.code).toBe(0);
      expect(run.stdout).toContain("Usage: agentmail");
      expect(run.stderr).toBe("");
    }
  });

  test("--version prints the version", async () => {
    const run = await runInProcess(["--version"]);
    expect(run.stdout).toMatch(/^\d+\.\d+\.\d+\n$/);
  });

  test("unknown commands and flags fail with exit 1 and one error line", async () => {
    const command = await runInProcess(["sned"]);
    expect(command.code).toBe(1);
    expect(command.stderr).toBe("error: unknown command 'sned'; did you mean 'send'?; run 'agentmail --help'\n");
    const flag = await runInProcess(["receive", "--bogus"]);
    expect(flag.code).toBe(1);
    expect(flag.stderr).toStartWith("error: unknown option '--bogus'");
    expect((await runInProcess(["--bogus"])).code).toBe(1);
  });

  test("--json turns failures into one JSON document on stdout", async () => {
    const run = await runInProcess(["receive", "--json"], { cwd: repo.dir });
    expect(run.code).toBe(2);
    expect(JSON.parse(run.stdout)).toEqual({ error: { code: "not_in_tmux", message: expect.stringContaining("$TMUX") } });
    expect(run.stderr).toBe("");
  });
});

describe("send and receive", () => {
  test("a message goes from one window to another, once", async () => {
    const sent = await runInProcess(["send", "bob smith", "PR #12 is ready"], as("alice"));
    expect(sent.code).toBe(0);
    expect(sent.stdout).toMatch(/^[A-Za-z0-9]{8}\n$/);
    const id = sent.stdout.trim();
    const line = JSON.parse(readFileSync(join(repo.mailDir, "bob%20smith.jsonl"), "utf8").trim());
    expect(line).toMatchObject({ id, from: "alice", to: "bob smith", message: "PR #12 is ready", read_flag: false });
    const received = await runInProcess(["receive"], as("bob smith"));
    expect(received).toEqual({ code: 0, stdout: `From: alice\nID: ${id}\n\nPR #12 is ready\n`, stderr: "" });
    expect((await runInProcess(["receive"], as("bob smith"))).stdout).toBe("No unread messages\n");
  });

  test("flags and --json", async () => {
    const sent = await runInProcess(["send", "-r", "reviewer", "-m", "-x is broken", "--json"], as("alice"));
    const { id } = JSON.parse(sent.stdout);
    const received = await runInProcess(["receive", "--json"], as("reviewer"));
    expect(JSON.parse(received.stdout)).toMatchObject({ id, from: "alice", to: "reviewer", message: "-x is broken", read_flag: true });
    expect(JSON.parse((await runInProcess(["receive", "--json"], as("reviewer"))).stdout)).toBeNull();
  });

  test("an unknown recipient names the closest ones", async () => {
    const run = await runInProcess(["send", "reviewr", "hi"], as("alice"));
    expect(run.code).toBe(1);
    expect(run.stderr).toContain('did you mean "reviewer"');
  });

  test("usage errors", async () => {
    expect((await runInProcess(["send"], as("alice"))).stderr).toStartWith("error: missing recipient");
    expect((await runInProcess(["send", "reviewer", "   "], as("alice"))).stderr).toStartWith("error: the message is empty");
    expect((await runInProcess(["send", "a", "b", "c"], as("alice"))).stderr).toStartWith("error: unexpected argument 'c'");
  });

  test("hook mode: mail on stderr with exit 2, otherwise silent exit 0", async () => {
    await runInProcess(["send", "alice", "wake up"], as("reviewer"));
    const withMail = await runInProcess(["receive", "--hook"], as("alice"));
    expect(withMail.code).toBe(2);
    expect(withMail.stderr).toStartWith("You got new mail\nFrom: reviewer\n");
    expect(withMail.stdout).toBe("");
    expect(await runInProcess(["receive", "--hook"], as("alice"))).toEqual({ code: 0, stdout: "", stderr: "" });
    expect(await runInProcess(["receive", "--hook"], { cwd: repo.dir })).toEqual({ code: 0, stdout: "", stderr: "" });
  });

  test("outside tmux or with a bad pane: exit 2", async () => {
    expect((await runInProcess(["receive"], { cwd: repo.dir })).code).toBe(2);
    const malformed = await runInProcess(["receive"], { env: { TMUX: server.agent("alice").env.TMUX, TMUX_PANE: "abc" }, cwd: repo.dir });
    expect(malformed.code).toBe(2);
    expect(malformed.stderr).toContain("malformed");
    const dead = await runInProcess(["send", "alice", "x"], { env: { TMUX: server.agent("alice").env.TMUX, TMUX_PANE: "%9999" }, cwd: repo.dir });
    expect(dead.code).toBe(2);
  });

  test("outside a repository without AGENTMAIL_DIR: exit 1 naming AGENTMAIL_DIR", async () => {
    const run = await runInProcess(["receive"], { ...as("alice"), cwd: "/" });
    expect(run.code).toBe(1);
    expect(run.stderr).toContain("AGENTMAIL_DIR");
  });
});
