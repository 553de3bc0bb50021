/**
 * `agentmail send` and `agentmail receive` through the command tree in process, against a private tmux server: a
 * message from one window to another, flags and --json, usage errors, hook mode, and outside tmux or a repository.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { HOOK_HEAD } from "../../../src/mail/frame.ts";
import { isRung } from "../../../src/store/local/doorbell.ts";
import { runInProcess } from "../../support/in-process.ts";
import { tempRepo } from "../../support/repo.ts";
import { TmuxServer } from "../../support/tmux-server.ts";

describe("send and receive", () => {
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

  test("--json turns failures into one JSON document on stdout", async () => {
    const run = await runInProcess(["receive", "--json"], { cwd: repo.dir });
    expect(run.code).toBe(2);
    expect(JSON.parse(run.stdout)).toEqual({ error: { code: "not_in_tmux", message: expect.stringContaining("$TMUX") } });
    expect(run.stderr).toBe("");
  });

  test("a message goes from one window to another, once", async () => {
    const sent = await runInProcess(["send", "bob smith", "PR #12 is ready"], as("alice"));
    expect(sent.code).toBe(0);
    expect(sent.stdout).toMatch(/^[A-Za-z0-9]{8}\n$/);
    const id = sent.stdout.trim();
    const line = JSON.parse(readFileSync(join(repo.mailDir, "bob%20smith.jsonl"), "utf8").trim());
    expect(line).toMatchObject({ id, from: "alice", to: "bob smith", message: "PR #12 is ready", read_flag: false });
    const received = await runInProcess(["receive"], as("bob smith"));
    expect(received).toEqual({ code: 0, stdout: `From: alice\nID: ${id}\n\n> PR #12 is ready\n`, stderr: "" });
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
  });

  test("a third word: quote the recipient when the leading words name a window, else the message; nothing is sent", async () => {
    expect(await runInProcess(["send", "bob", "smith", "hi"], as("alice"))).toEqual({
      code: 1,
      stdout: "",
      stderr: `error: unexpected argument 'hi' for 'agentmail send'; a window is named "bob smith"; did you mean to quote "bob smith"?\n`,
    });
    expect((await runInProcess(["send", "reviewer", "hello", "world"], as("alice"))).stderr).toBe(
      "error: unexpected argument 'world' for 'agentmail send'; quote a message that has spaces\n",
    );
    expect((await runInProcess(["send", "reviewer", "hello", "world"], { cwd: repo.dir })).stderr).toBe(
      "error: unexpected argument 'world' for 'agentmail send'; quote a message that has spaces\n",
    );
    expect(JSON.parse((await runInProcess(["receive", "--json"], as("reviewer"))).stdout)).toBeNull();
  });

  test("hook mode: mail on stderr with exit 2, otherwise silent exit 0", async () => {
    await runInProcess(["send", "alice", "wake up"], as("reviewer"));
    const withMail = await runInProcess(["receive", "--hook"], as("alice"));
    expect(withMail.code).toBe(2);
    expect(withMail.stderr).toStartWith(`${HOOK_HEAD}\nFrom: reviewer\n`);
    expect(withMail.stdout).toBe("");
    expect(await runInProcess(["receive", "--hook"], as("alice"))).toEqual({ code: 0, stdout: "", stderr: "" });
    expect(await runInProcess(["receive", "--hook"], { cwd: repo.dir })).toEqual({ code: 0, stdout: "", stderr: "" });
  });

  test("the post-tool hook: fresh mail as its JSON on stdout, and then the bell is quiet, so the next tool's hook starts nothing", async () => {
    // Registered, and its end-of-turn hook found nothing: the bell is quiet until a send rings it.
    expect((await runInProcess(["status", "ready"], as("reviewer"))).code).toBe(0);
    expect((await runInProcess(["receive", "--hook"], as("reviewer"))).code).toBe(0);
    expect(isRung(repo.mailDir, "reviewer")).toBe(false);
    const sent = (await runInProcess(["send", "reviewer", "mid-turn mail"], as("alice"))).stdout.trim();
    expect(isRung(repo.mailDir, "reviewer")).toBe(true);
    const hook = await runInProcess(["receive", "--after-tool", "claude"], as("reviewer"));
    expect(hook.code).toBe(0);
    const context = JSON.parse(hook.stdout).hookSpecificOutput;
    expect(context.hookEventName).toBe("PostToolUse");
    expect(context.additionalContext).toContain(`ID: ${sent}\n`);
    expect(isRung(repo.mailDir, "reviewer")).toBe(false);
  });

  test("outside tmux or with a bad pane: exit 2", async () => {
    expect((await runInProcess(["receive"], { cwd: repo.dir })).code).toBe(2);
    const malformed = await runInProcess(["receive"], { env: { TMUX: server.agent("alice").env.TMUX, TMUX_PANE: "abc" }, cwd: repo.dir });
    expect(malformed.code).toBe(2);
    expect(malformed.stderr).toContain("malformed");
    const deadPane = { TMUX: server.agent("alice").env.TMUX, TMUX_PANE: "%9999" };
    const dead = await runInProcess(["send", "alice", "x"], { env: deadPane, cwd: repo.dir });
    expect(dead.code).toBe(2);
  });

  test("outside a repository without AGENTMAIL_DIR: exit 1 naming AGENTMAIL_DIR", async () => {
    const run = await runInProcess(["receive"], { ...as("alice"), cwd: "/" });
    expect(run.code).toBe(1);
    expect(run.stderr).toContain("AGENTMAIL_DIR");
  });
});
