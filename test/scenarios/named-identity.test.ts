/**
 * AGENTMAIL_NAME against the binary, in a private tmux server. An agent started with it claims its name when it
 * registers in a window of that name; from then on its send and receive make no tmux call at all (proved with a
 * `tmux` on PATH that logs every call before it runs the real one). A name that is not this pane's claim is never
 * trusted: it asks tmux, and a name tmux does not confirm is refused with nothing read or stored. A renamed window
 * keeps its agent's name; another window that takes the name must register, which moves the name, and the old
 * holder is refused from then on. Every message is delivered once, to the pane that held its name.
 */
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, test } from "bun:test";
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { am, expectError, expectSent, HOOK_OPENING, shown, storedMessages } from "../support/e2e.ts";
import { tempRepo } from "../support/repo.ts";
import { TmuxServer, type Agent } from "../support/tmux-server.ts";

let server: TmuxServer;
let scratch: string;
let repo: ReturnType<typeof tempRepo>;
/** Every tmux call an agentmail run makes, one line each. */
let callLog: string;
let shimDir: string;

const box = (name: string) => join(repo.mailDir, `${name}.jsonl`);
const registration = (name: string) => JSON.parse(readFileSync(join(repo.mailDir, ".agents", `${name}.json`), "utf8"));
const tmuxCalls = () => {
  try {
    return readFileSync(callLog, "utf8").split("\n").filter(Boolean).length;
  } catch {
    return 0;
  }
};

/** The environment of a process in `agent`'s pane, started with AGENTMAIL_NAME=`name` (none when null). */
function envOf(agent: Agent, name: string | null = agent.name): Record<string, string> {
  const env: Record<string, string> = { ...agent.env, PATH: `${shimDir}:${agent.env.PATH ?? ""}` };
  if (name !== null) env.AGENTMAIL_NAME = name;
  return env;
}
const run = (env: Record<string, string>, args: string[]) => am(args, { env, cwd: repo.dir });

beforeAll(() => {
  scratch = mkdtempSync(join(tmpdir(), "agentmail-named-"));
  server = TmuxServer.start(["alice", "bob", "carol"], scratch);
  shimDir = join(scratch, "bin");
  callLog = join(scratch, "tmux-calls");
  mkdirSync(shimDir);
  const realTmux = Bun.which("tmux");
  if (!realTmux) throw new Error("tmux is not on PATH; install tmux to run these tests");
  const quote = (text: string) => `'${text.replaceAll("'", "'\\''")}'`;
  writeFileSync(join(shimDir, "tmux"), `#!/bin/sh\necho "$*" >> ${quote(callLog)}\nexec ${quote(realTmux)} "$@"\n`);
  chmodSync(join(shimDir, "tmux"), 0o755);
});
afterAll(() => {
  server?.stop();
  rmSync(scratch, { recursive: true, force: true });
});
beforeEach(() => {
  repo = tempRepo();
  rmSync(callLog, { force: true });
});
afterEach(() => repo.remove());

/** The agents register as their SessionStart hook does, which is when a name is claimed. */
async function claim(...names: string[]): Promise<void> {
  for (const name of names) expect((await run(envOf(server.agent(name)), ["status", "ready"])).code).toBe(0);
}

describe("named agents", () => {
  test("registering with AGENTMAIL_NAME in a window of that name claims it: the pane and the tmux server are recorded", async () => {
    await claim("alice");
    expect(registration("alice")).toMatchObject({ name: "alice", status: "ready", pane: server.agent("alice").paneId });
    expect(registration("alice").claim_server).toBe(server.agent("alice").env.TMUX!.replace(/,\d+$/, ""));
    const onboard = await run(envOf(server.agent("bob")), ["onboard"]);
    expect(onboard.code).toBe(0);
    expect(onboard.stdout).toContain('You are "bob" (AGENTMAIL_NAME: your send and receive need no tmux call).');
    expect(registration("bob").claim_server).toBe(registration("alice").claim_server);
    // Without the name it is a plain registration, as before: no claim.
    expect((await run(envOf(server.agent("carol"), null), ["status", "ready"])).code).toBe(0);
    expect(registration("carol").claim_server).toBeUndefined();
  });

  test("send, receive, receive --json and receive --hook make no tmux call, and deliver what was sent", async () => {
    await claim("alice", "bob");
    const before = tmuxCalls();
    const alice = envOf(server.agent("alice"));
    const bob = envOf(server.agent("bob"));
    const first = expectSent(await run(alice, ["send", "bob", "PR #12 is ready"]));
    const second = expectSent(await run(alice, ["send", "bob", "and PR #13"]));
    const taken = await run(bob, ["receive"]);
    expect(taken).toMatchObject({
      code: 0,
      stdout: shown("alice", first, "PR #12 is ready"),
      stderr: "1 more unread; run agentmail receive again\n",
    });
    const json = await run(bob, ["receive", "--json"]);
    expect(JSON.parse(json.stdout)).toMatchObject({ id: second, from: "alice", to: "bob", message: "and PR #13", read_flag: true });
    expect(await run(bob, ["receive", "--hook"])).toMatchObject({ code: 0, stdout: "", stderr: "" });
    expect(await run(bob, ["receive"])).toMatchObject({ code: 0, stdout: "No unread messages\n" });
    expect(storedMessages(box("bob")).map((message) => [message.id, message.from, message.read_flag])).toEqual([
      [first, "alice", true],
      [second, "alice", true],
    ]);
    expect(tmuxCalls()).toBe(before);
  });

  test("a hook delivers mail through a claim with exit 2, without a tmux call", async () => {
    await claim("alice", "bob");
    const before = tmuxCalls();
    const id = expectSent(await run(envOf(server.agent("alice")), ["send", "bob", "lunch?"]));
    const hook = await run(envOf(server.agent("bob")), ["receive", "--hook"]);
    expect(hook).toMatchObject({ code: 2, stdout: "", stderr: `${HOOK_OPENING}\n${shown("alice", id, "lunch?")}` });
    expect(tmuxCalls()).toBe(before);
  });

  test("to a name nobody claimed, a named sender asks tmux, and the window decides as before", async () => {
    await claim("alice");
    const before = tmuxCalls();
    const id = expectSent(await run(envOf(server.agent("alice")), ["send", "carol", "hello carol"]));
    expect(tmuxCalls()).toBeGreaterThan(before);
    const carol = await run(envOf(server.agent("carol"), null), ["receive"]);
    expect(carol).toMatchObject({ code: 0, stdout: shown("alice", id, "hello carol") });
    const unknown = expectError(await run(envOf(server.agent("alice")), ["send", "dave", "hi"]), 1);
    expect(unknown).toStartWith('error: no window named "dave" in this tmux session');
  });
});

describe("a name that is not this pane's claim never reads another's mail", () => {
  async function seedForBob(): Promise<string> {
    await claim("alice", "bob");
    return expectSent(await run(envOf(server.agent("alice")), ["send", "bob", "for bob only"]));
  }

  test("AGENTMAIL_NAME=bob in alice's window: receive, peek, send, status refused; the hook silent; bob's mail unread", async () => {
    const id = await seedForBob();
    const impostor = envOf(server.agent("alice"), "bob");
    const before = tmuxCalls();
    const mismatch = `error: AGENTMAIL_NAME is "bob" but the window of pane ${server.agent("alice").paneId} is named "alice"; `;
    expect(expectError(await run(impostor, ["receive"]), 1)).toStartWith(mismatch);
    expect(expectError(await run(impostor, ["receive", "--peek"]), 1)).toStartWith(mismatch);
    expect(await run(impostor, ["receive", "--hook"])).toMatchObject({ code: 0, stdout: "", stderr: "" });
    expect(expectError(await run(impostor, ["send", "carol", "forged"]), 1)).toStartWith(mismatch);
    expect(expectError(await run(impostor, ["status", "ready"]), 1)).toStartWith(mismatch);
    const json = JSON.parse((await run(impostor, ["receive", "--json"])).stdout);
    expect(json.error.code).toBe("name_mismatch");
    // It asked tmux rather than trust the name.
    expect(tmuxCalls()).toBeGreaterThan(before);
    expect(storedMessages(box("bob")).map((message) => [message.id, message.read_flag])).toEqual([[id, false]]);
    expect(registration("bob").pane).toBe(server.agent("bob").paneId);
    expect(() => readFileSync(box("carol"))).toThrow();
    // The real bob still gets it.
    expect((await run(envOf(server.agent("bob")), ["receive"])).stdout).toBe(shown("alice", id, "for bob only"));
  });

  test("a claim recorded on another tmux server (say, one that was restarted) is not trusted: tmux is asked", async () => {
    const id = await seedForBob();
    const path = join(repo.mailDir, ".agents", "bob.json");
    writeFileSync(path, JSON.stringify({ ...registration("bob"), claim_server: "/tmp/a-server-that-is-gone,1" }) + "\n");
    const before = tmuxCalls();
    expect((await run(envOf(server.agent("bob")), ["receive"])).stdout).toBe(shown("alice", id, "for bob only"));
    expect(tmuxCalls()).toBeGreaterThan(before);
  });

  test("an agent that went offline holds no claim: its next receive asks tmux", async () => {
    const id = await seedForBob();
    expect((await run(envOf(server.agent("bob")), ["status", "offline"])).code).toBe(0);
    const before = tmuxCalls();
    expect((await run(envOf(server.agent("bob")), ["receive"])).stdout).toBe(shown("alice", id, "for bob only"));
    expect(tmuxCalls()).toBeGreaterThan(before);
  });
});

describe("a window renamed between two commands", () => {
  test("the claimant keeps its name; a new window of that name is refused until it registers, which moves the name", async () => {
    await claim("alice", "bob");
    const alice = envOf(server.agent("alice"));
    const oldBob = envOf(server.agent("bob"));
    const first = expectSent(await run(alice, ["send", "bob", "one"]));
    expect((await run(oldBob, ["receive"])).stdout).toBe(shown("alice", first, "one"));

    server.run(["rename-window", "-t", server.agent("bob").paneId, "robert"]);
    // The name belongs to the agent, not to the window's label: no tmux call, and bob's mail still reaches it.
    const before = tmuxCalls();
    const second = expectSent(await run(alice, ["send", "bob", "two"]));
    expect((await run(oldBob, ["receive"])).stdout).toBe(shown("alice", second, "two"));
    expect(tmuxCalls()).toBe(before);
    // A sender that asks tmux finds no window named bob now, and still reaches the claimant.
    const viaTmux = expectSent(await run(envOf(server.agent("carol"), null), ["send", "bob", "two and a half"]));
    expect((await run(oldBob, ["receive"])).stdout).toBe(shown("carol", viaTmux, "two and a half"));

    // A new window takes the name "bob". While the old agent's claim holds, it cannot read bob's mail.
    const newBob = server.addWindow("bob", repo.dir);
    const third = expectSent(await run(alice, ["send", "bob", "three"]));
    const claimed = expectError(await run(envOf(newBob, null), ["receive"]), 1);
    expect(claimed).toBe(
      `error: "bob" is claimed by pane ${oldBob.TMUX_PANE}, an agent started with AGENTMAIL_NAME=bob; ` +
        "give this window another name, or run 'agentmail status ready' here to take the name over\n",
    );
    expect(await run(envOf(newBob, null), ["receive", "--hook"])).toMatchObject({ code: 0, stdout: "", stderr: "" });
    expect(storedMessages(box("bob")).find((message) => message.id === third)?.read_flag).toBe(false);

    // Registering in the new window moves the name there; the old agent is refused from then on, by tmux's word.
    expect((await run(envOf(newBob, null), ["status", "ready"])).code).toBe(0);
    expect(registration("bob").pane).toBe(newBob.paneId);
    const refused = expectError(await run(oldBob, ["receive"]), 1);
    expect(refused).toStartWith(`error: AGENTMAIL_NAME is "bob" but the window of pane ${oldBob.TMUX_PANE} is named "robert"; `);
    expect((await run(envOf(newBob, null), ["receive"])).stdout).toBe(shown("alice", third, "three"));

    // Each message was read once, by the pane that held the name when it was read.
    expect(storedMessages(box("bob")).map((message) => [message.id, message.read_flag])).toEqual([
      [first, true],
      [second, true],
      [viaTmux, true],
      [third, true],
    ]);
  });
});
