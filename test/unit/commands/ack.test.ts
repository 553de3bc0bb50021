/**
 * `ack` and `send --wait-for`, in process: the sender blocks in this process while the recipient (the compiled
 * binary, in its own pane of a private tmux server) reads, acknowledges or replies; a wait nobody answers times out
 * with exit 3 and says where the message got to; a copy sent into another repository's store is followed there.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, realpathSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { BINARY } from "../../support/repo.ts";
import { runInProcess } from "../../support/in-process.ts";
import { TmuxServer } from "../../support/tmux-server.ts";
import { waitFor } from "../../support/wait.ts";
import { repository as newRepository } from "../../support/projects.ts";

const SHELL = "bash --norc --noprofile -i";

let root: string;
let server: TmuxServer;
const panes = new Map<string, { pane: string; cwd: string }>();

/** A new repository under the scratch root. */
const repository = (name: string): string => newRepository(root, name);

const envOf = (agent: string) => ({ ...server.agent("claude").env, TMUX_PANE: panes.get(agent)!.pane });

/** The sender, in this process. */
const run = (agent: string, args: string[]) => runInProcess(args, { env: envOf(agent), cwd: panes.get(agent)!.cwd });

/** Another agent, as its own process in its own pane (the in-process sender is blocked meanwhile). */
async function binary(agent: string, args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  const child = Bun.spawn([BINARY, ...args], { env: envOf(agent), cwd: panes.get(agent)!.cwd, stdout: "pipe", stderr: "pipe" });
  const [stdout, stderr, code] = await Promise.all([new Response(child.stdout).text(), new Response(child.stderr).text(), child.exited]);
  return { code, stdout, stderr };
}

/** Receives as the recipient until the message comes; the id it got. */
async function received(agent: string, what: string): Promise<string> {
  const taken = await waitFor(`${agent} to receive "${what}"`, async () => {
    const { stdout } = await binary(agent, ["receive", "--json"]);
    return stdout.includes(what) ? stdout : null;
  });
  return (JSON.parse(taken) as { id: string }).id;
}

beforeAll(() => {
  root = realpathSync(mkdtempSync(join(tmpdir(), "agentmail-ack-")));
  const app = repository("app");
  const lib = repository("lib");
  server = TmuxServer.start(["claude"], app);
  panes.set("claude@app", { pane: server.agent("claude").paneId, cwd: app });
  panes.set("codex@app", { pane: server.addWindow("codex", app).paneId, cwd: app });
  const reviewer = server.run(["new-session", "-d", "-P", "-F", "#{pane_id}", "-s", "lib", "-n", "reviewer", "-c", lib, SHELL]).trim();
  panes.set("reviewer@lib", { pane: reviewer, cwd: lib });
});

afterAll(() => {
  server?.stop();
  if (root) rmSync(root, { recursive: true, force: true });
});

describe("ack", () => {
  test("acknowledges a message by id: marked read, and the sender's sent says acknowledged", async () => {
    const id = (await run("claude@app", ["send", "codex", "please review"])).stdout.trim();
    const acked = await run("codex@app", ["ack", id]);
    expect(acked).toMatchObject({ code: 0, stdout: `Acknowledged ${id}\n` });
    expect((await run("codex@app", ["receive"])).stdout).toBe("No unread messages\n");
    expect((await run("claude@app", ["sent"])).stdout).toContain(`to codex  acknowledged`);
  });

  test("--json lists what was acknowledged, each id once", async () => {
    const id = (await run("claude@app", ["send", "codex", "twice"])).stdout.trim();
    const acked = await run("codex@app", ["ack", id, id, "--json"]);
    expect(acked.code).toBe(0);
    expect(JSON.parse(acked.stdout)).toEqual({ acknowledged: [id] });
  });

  test("an id not in the caller's mailbox fails the whole call and records nothing", async () => {
    const id = (await run("claude@app", ["send", "codex", "unacked"])).stdout.trim();
    const refused = await run("codex@app", ["ack", id, "NoSuchId", "--json"]);
    expect(refused.code).toBe(1);
    expect(JSON.parse(refused.stdout).error).toEqual({
      code: "not_found",
      message: "no message NoSuchId in your mailbox; run 'agentmail inbox --all' to list your message ids",
    });
    expect((await run("claude@app", ["sent"])).stdout).toMatch(new RegExp(`${id}[^\\n]*\\n?[^\\n]*to codex  (stored|notified)`));
    expect((await run("codex@app", ["receive"])).stdout).toContain("unacked");
  });
});

describe("send --wait-for", () => {
  test("reply: the id first, then the reply from another pane, printed as receive prints it and marked read", async () => {
    const waiting = run("claude@app", ["send", "codex", "ready to merge?", "--wait-for", "reply", "--timeout", "120"]);
    const id = await received("codex@app", "ready to merge?");
    expect(await binary("codex@app", ["reply", id, "yes, merge it"])).toMatchObject({ code: 0 });
    const result = await waiting;
    expect(result.code).toBe(0);
    const [first, ...rest] = result.stdout.split("\n");
    expect(first).toBe(id);
    expect(rest.join("\n")).toContain("From: codex\n");
    expect(rest.join("\n")).toContain("yes, merge it");
    // Taken by the wait: not shown again.
    expect((await run("claude@app", ["receive"])).stdout).toBe("No unread messages\n");
  });

  test("ack with --json: one document once the recipient acknowledges", async () => {
    const waiting = run("claude@app", ["send", "codex", "ack me", "--wait-for", "ack", "--timeout", "120", "--json"]);
    const id = await received("codex@app", "ack me");
    expect(await binary("codex@app", ["ack", id])).toMatchObject({ code: 0 });
    const result = await waiting;
    expect(result.code).toBe(0);
    const document = JSON.parse(result.stdout);
    expect(document).toMatchObject({ id, wait_for: "ack", reached: true, reply: null });
    expect(document.copies).toEqual([{ mailbox: "codex", delivery: expect.objectContaining({ state: "acknowledged" }) }]);
  });

  test("a wait nobody answers times out: exit 3, and where the message got to", async () => {
    const result = await run("claude@app", ["send", "codex", "anyone?", "--wait-for", "read", "--timeout", "0.3"]);
    expect(result.code).toBe(3);
    const id = result.stdout.split("\n")[0]!;
    expect(result.stdout).toContain("to codex  ");
    expect(result.stderr).toContain(`${id} did not reach read within 0.3 s; where it is: codex `);
    expect(result.stderr).toContain("'agentmail sent' follows it");
    await run("codex@app", ["receive"]);
  });

  test("--json timeout: reached false with each copy's state", async () => {
    const result = await run("claude@app", ["send", "codex", "still there?", "--wait-for", "ack", "--timeout", "0.2", "--json"]);
    expect(result.code).toBe(3);
    const document = JSON.parse(result.stdout);
    expect(document).toMatchObject({ wait_for: "ack", reached: false, reply: null });
    expect(["stored", "notified"]).toContain(document.copies[0].delivery.state);
    await run("codex@app", ["receive"]);
  });

  test("read: a copy in another repository's store is followed there until it is read", async () => {
    const waiting = run("claude@app", ["send", "reviewer@lib", "across", "--wait-for", "read", "--timeout", "120"]);
    await received("reviewer@lib", "across");
    const result = await waiting;
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(/^\S+\nto reviewer@lib {2}read /);
  });

  test("--wait-for takes read, reply or ack; --timeout needs --wait-for", async () => {
    expect((await run("claude@app", ["send", "codex", "x", "--wait-for", "seen"])).stderr).toContain(
      "--wait-for takes read, reply or ack, not 'seen'",
    );
    expect((await run("claude@app", ["send", "codex", "x", "--timeout", "5"])).stderr).toContain("--timeout goes with --wait-for");
    expect((await run("codex@app", ["receive"])).stdout).toBe("No unread messages\n");
  });
});
