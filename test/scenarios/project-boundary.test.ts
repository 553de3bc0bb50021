/**
 * The mailman delivers only into this project's panes, end to end with the compiled binary: two repositories (`app`
 * and `lib`) on one tmux server, whose windows carry the same names, with stand-in agent CLIs
 * (test/support/fake-agent.ts). `app`'s mailman never frames `app`'s mail into `lib`'s Claude Code, never types a
 * reminder into `lib`'s Gemini CLI, keeps no route into `lib` for `send` (and forgets one an earlier mailman left),
 * and `mailman status` and `doctor` never name `lib`'s pane as `app`'s agent. Then two tmux servers whose panes
 * share an id (`%0`) and one Claude Code registry: a frame for the agent of one server never goes to the other's
 * session. The real Codex CLI across projects is in test/agents/codex-projects.test.ts.
 *
 * Every "never" is checked after the mailman recorded what it did with that very message (unreachable, with why),
 * so it is not a matter of waiting long enough.
 */
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fakeClaude, installFakeAgents, startFakeAgent } from "../support/fake-agent.ts";
import { repository, SHELL } from "../support/projects.ts";
import { TmuxServer } from "../support/tmux-server.ts";
import { am, expectSent, oneJson, paneText, printedPid, stopMailman, storedMessages, waitFor } from "../support/workflow.ts";

setDefaultTimeout(120_000);

let root: string;
let bin: string;
let server: TmuxServer;
const dirs = {} as Record<"app" | "lib", string>;
const pids = new Set<number>();
const DAEMON = ["mailman", "--daemon", "--typing", "gem", "--interval", "600", "--sweep", "0.3"];

/** A window `name` working in `project`'s repository, in that project's session, known to the server as `name@project`. */
function place(name: string, project: "app" | "lib"): void {
  const session = project === "app" ? server.session : "lib";
  const exists = server.run(["list-sessions", "-F", "#{session_name}"]).split("\n").includes(session);
  const where = exists ? ["new-window", "-d", "-t", `${session}:`] : ["new-session", "-d", "-s", session];
  const pane = server.run([...where, "-P", "-F", "#{window_id} #{pane_id}", "-n", name, "-c", dirs[project], SHELL]).trim();
  const [windowId, paneId] = pane.split(" ") as [string, string];
  const env = { ...server.agent("sender").env, TMUX_PANE: paneId };
  server.agents.set(`${name}@${project}`, { name, paneId, windowId, env });
}

const as = (agent: string) => ({ env: server.agent(agent).env, cwd: dirs[agent.endsWith("@lib") ? "lib" : "app"] });
const run = (agent: string, args: string[]) => am(args, as(agent));
const pane = (agent: string) => server.agent(agent).paneId;
const configDir = (agent: string) => join(root, `claude-${agent.replace("@", "-")}`);
const frames = (dir: string): { message: { content: string } }[] =>
  existsSync(join(dir, "frames.jsonl"))
    ? readFileSync(join(dir, "frames.jsonl"), "utf8")
        .trim()
        .split("\n")
        .map((line) => JSON.parse(line))
    : [];

interface Copy {
  id: string;
  to: string;
  delivery?: { state: string; event?: string; reason?: string; channel?: string };
}
/** The copy of `id` as the sender's `sent --json` shows it, once a mailman did something with it (else null). */
async function handled(sender: { env: Record<string, string>; cwd: string }, id: string): Promise<Copy | null> {
  const copy = (oneJson(await am(["sent", "--json"], sender)) as Copy[]).find((each) => each.id === id);
  return copy?.delivery && (copy.delivery.state !== "stored" || copy.delivery.event) ? copy : null;
}

async function startMailman(): Promise<void> {
  const started = await run("sender", DAEMON);
  expect({ code: started.code, stderr: started.stderr }).toEqual({ code: 0, stderr: "" });
  const pid = printedPid(started.stdout);
  if (pid) pids.add(pid);
}

beforeAll(async () => {
  root = realpathSync(mkdtempSync(join(tmpdir(), "agentmail-boundary-")));
  bin = installFakeAgents(root);
  dirs.app = repository(root, "app");
  dirs.lib = repository(root, "lib");
  server = TmuxServer.start(["sender"], dirs.app);
  for (const [name, project] of [
    ["bob", "app"],
    ["gem", "app"],
    ["bob", "lib"],
    ["gem", "lib"],
  ] as const)
    place(name, project);
  // app's bob is a shell; lib's bob is a Claude Code with an inbox. Both projects' gem run a Gemini CLI.
  mkdirSync(configDir("bob@lib"));
  await startFakeAgent(server, "bob@lib", `CLAUDE_CONFIG_DIR='${configDir("bob@lib")}' ${fakeClaude(bin, "--inbox")}`);
  for (const gem of ["gem@app", "gem@lib"]) await startFakeAgent(server, gem, `node '${join(bin, "gemini")}'`);
  await startMailman();
});

afterAll(async () => {
  if (server) await stopMailman(as("sender"), pids);
  server?.stop();
  if (root) rmSync(root, { recursive: true, force: true });
});

describe("one tmux server, two repositories, windows of the same names", () => {
  test("a frame for app's bob never goes into lib's bob; status, the routes and doctor name app's pane", async () => {
    const id = expectSent(await run("sender", ["send", "bob", "for app's bob only"]));
    const copy = await waitFor("app's mailman to handle the copy for app's bob", () => handled(as("sender"), id));
    expect(copy.delivery).toMatchObject({ state: "stored", event: "unreachable" });
    expect(copy.delivery!.reason).toContain(`pane ${pane("bob@app")} runs bash`);
    expect(frames(configDir("bob@lib")).filter((frame) => frame.message.content.includes(id))).toEqual([]);
    expect(paneText(server, "bob@lib")).not.toContain("inbox:");
    expect(storedMessages(join(dirs.app, ".git", "mail", "bob.jsonl")).map((message) => message.read_flag)).toEqual([false]);
    const routes = join(dirs.app, ".git", "mail", ".mailman", "routes.json");
    expect(existsSync(routes) ? Object.keys(JSON.parse(readFileSync(routes, "utf8"))) : []).not.toContain("bob");
    const status = oneJson(await run("sender", ["mailman", "status", "--json"])) as {
      agents: { name: string; outcome: string; detail: string }[];
    };
    expect(status.agents.find((agent) => agent.name === "bob")).toMatchObject({
      outcome: "no_agent_pane",
      detail: `pane ${pane("bob@app")} runs bash, not an agent CLI`,
    });
    const doctor = (await run("sender", ["doctor"])).stdout;
    expect(doctor).toContain(`note delivery: "bob": no agent CLI in its window (pane ${pane("bob@app")} runs bash, not an agent CLI)`);
    expect(doctor).not.toContain(`(pane ${pane("bob@lib")})`);
  });

  test("a typed reminder (--typing) for app's gem lands in app's Gemini CLI only", async () => {
    expectSent(await run("sender", ["send", "gem", "for app's gem only"]));
    await waitFor(
      () => `app's gem to be reminded:\n${paneText(server, "gem@app")}`,
      () => paneText(server, "gem@app").includes("got: agentmail: 1 unread message."),
    );
    // Typed in the same sweep as every other pane it chose: lib's gem would show it by now.
    expect(paneText(server, "gem@lib")).not.toContain("got:");
  });

  test("a route into lib's bob that an earlier mailman left is forgotten before send can use it", async () => {
    await stopMailman(as("sender"), pids);
    const [entry] = readdirSync(join(configDir("bob@lib"), "sessions"));
    const session = JSON.parse(readFileSync(join(configDir("bob@lib"), "sessions", entry!), "utf8"));
    const route = {
      channel: "claude-inbox",
      pane: pane("bob@lib"),
      socket: session.messagingSocketPath,
      pid: session.pid,
      procStart: session.procStart,
    };
    const mailman = join(dirs.app, ".git", "mail", ".mailman");
    writeFileSync(join(mailman, "routes.json"), JSON.stringify({ bob: { route, verified_at: new Date().toISOString(), holds: false } }));
    rmSync(join(mailman, "state.json"), { force: true });
    await startMailman();
    // Its first sweep is over (it writes its state): the routes were checked before it.
    await waitFor("the mailman's first sweep", () => existsSync(join(mailman, "state.json")));
    expect(Object.keys(JSON.parse(readFileSync(join(mailman, "routes.json"), "utf8")))).toEqual([]);
    const before = frames(configDir("bob@lib")).length;
    const id = expectSent(await run("sender", ["send", "bob", "not along a stale route"]));
    expect(frames(configDir("bob@lib")).slice(before)).toEqual([]);
    expect((await waitFor("app's mailman to handle the copy", () => handled(as("sender"), id))).delivery).toMatchObject({
      state: "stored",
      event: "unreachable",
    });
  });
});

describe("two tmux servers whose panes share an id, and one Claude Code registry", () => {
  let one: TmuxServer;
  let two: TmuxServer;
  const registry = () => join(root, "claude-shared");
  const lib = (name: string) => ({ env: two.agent(name).env, cwd: dirs.lib });

  beforeAll(async () => {
    mkdirSync(registry());
    // Server one: app's alice in %0, a Claude Code with an inbox. Server two: lib's carol in %0, a Claude Code
    // without one (an older version, or its inbox turned off), registered in the same config dir.
    one = TmuxServer.start(["alice"], dirs.app);
    two = TmuxServer.start(["carol", "dave"], dirs.lib);
    expect([one.agent("alice").paneId, two.agent("carol").paneId]).toEqual(["%0", "%0"]);
    await startFakeAgent(one, "alice", `CLAUDE_CONFIG_DIR='${registry()}' ${fakeClaude(bin, "--inbox")}`);
    await startFakeAgent(two, "carol", `CLAUDE_CONFIG_DIR='${registry()}' ${fakeClaude(bin)}`);
    const started = await am(["mailman", "--daemon", "--interval", "600", "--sweep", "0.3"], lib("dave"));
    expect(started.code).toBe(0);
    const pid = printedPid(started.stdout);
    if (pid) pids.add(pid);
  });

  afterAll(async () => {
    if (two) await stopMailman(lib("dave"), pids);
    two?.stop();
    one?.stop();
  });

  test("mail for carol (server two, %0) never goes to alice's session (server one, %0): no route, her hooks bring it", async () => {
    const id = expectSent(await am(["send", "carol", "for carol only"], lib("dave")));
    const copy = await waitFor("lib's mailman to handle the copy for carol", () => handled(lib("dave"), id));
    expect(copy.delivery).toMatchObject({ state: "stored", event: "unreachable" });
    expect(copy.delivery!.reason).toContain("no Claude Code session registry entry is the process in pane %0");
    expect(frames(registry()).filter((frame) => frame.message.content.includes(id))).toEqual([]);
    expect(storedMessages(join(dirs.lib, ".git", "mail", "carol.jsonl")).map((message) => message.read_flag)).toEqual([false]);
  });
});
