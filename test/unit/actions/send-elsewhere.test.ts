/**
 * Mail across projects, in process (the scenario test/scenarios/projects.test.ts runs the binary): a private tmux
 * server whose sessions work in two repositories with the same window names, and what routing, recipients --all,
 * sent and a bounce's return path make of them.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync, mkdtempSync, readFileSync, realpathSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { configuredAlias, projectOf, repositoryAt, sortWindows } from "../../../src/identity/projects.ts";
import { senderAddress, parseAddress } from "../../../src/mail/addresses.ts";
import { runInProcess } from "../../support/in-process.ts";
import { git, type Panes, repository as newRepository, session as newSession } from "../../support/projects.ts";
import { TmuxServer } from "../../support/tmux-server.ts";

let root: string;
let server: TmuxServer;
const dirs: Record<string, string> = {};
const panes: Panes = new Map();

const repository = (name: string, origin?: string) => newRepository(root, name, origin);
/** A session of windows working in `dir`, as `name@project`. */
const session = (name: string, project: string, dir: string, windows: string[]) => newSession(server, panes, name, project, dir, windows);

const run = (agent: string, args: string[]) =>
  runInProcess(args, { env: { ...server.agent("claude").env, TMUX_PANE: panes.get(agent)!.pane }, cwd: panes.get(agent)!.cwd });
const mailbox = (project: string, name: string) => join(dirs[project]!, ".git", "mail", `${name}.jsonl`);

beforeAll(() => {
  root = realpathSync(mkdtempSync(join(tmpdir(), "agentmail-elsewhere-")));
  dirs.app = repository("app");
  dirs.lib = repository("lib");
  dirs.tools = repository("tools");
  git(["config", "agentmail.project", "toolbox"], dirs.tools);
  server = TmuxServer.start(["claude"], dirs.app);
  panes.set("claude@app", { pane: server.agent("claude").paneId, cwd: dirs.app });
  panes.set("codex@app", { pane: server.addWindow("codex", dirs.app).paneId, cwd: dirs.app });
  session("lib", "lib", dirs.lib, ["claude", "reviewer"]);
  session("tools", "tools", dirs.tools, ["reviewer", "helper"]);
  session("home", "home", root, ["shell"]);
});

afterAll(() => {
  server?.stop();
  if (root) rmSync(root, { recursive: true, force: true });
});

describe("projects", () => {
  test("a repository's project is its directory name, or its alias; a path outside every repository has none", () => {
    expect(projectOf(repositoryAt(dirs.lib!)!).names).toEqual(["lib"]);
    expect(projectOf(repositoryAt(dirs.tools!)!).names).toEqual(["toolbox", "tools"]);
    expect(configuredAlias(join(dirs.app!, ".git"))).toBeNull();
    expect(repositoryAt(root)).toBeNull();
  });

  test("name@project parses as an agent of a project; a sender's address too; a name cannot hold '@'", () => {
    expect(parseAddress("reviewer@lib")).toEqual({ kind: "agent", name: "reviewer", project: "lib" });
    expect(parseAddress("bob@example.com/team/lib")).toEqual({ kind: "agent", name: "bob", project: "example.com/team/lib" });
    expect(() => parseAddress("bob@")).toThrow("names no project after '@'");
    expect(senderAddress("claude@app")).toEqual({ kind: "agent", name: "claude", project: "app" });
    expect(senderAddress("claude")).toEqual({ kind: "agent", name: "claude" });
  });

  test("without a repository, or with AGENTMAIL_DIR, no window is sorted out", () => {
    const caller = { paneId: "%0", sessionId: "$0", windowId: "@0", name: "a", windows: [], serverWindows: [] };
    expect(sortWindows(caller, null, {}, null).projects).toEqual({ own: null, elsewhere: [], outside: [] });
    const repository = repositoryAt(dirs.app!);
    expect(sortWindows(caller, repository, { AGENTMAIL_DIR: "/x" }, null).projects.own).toBeNull();
  });
});

describe("routing", () => {
  test("the same name in two projects: each project's own, no duplicate_name", async () => {
    expect(await run("claude@app", ["send", "codex", "app's"])).toMatchObject({ code: 0 });
    expect(await run("claude@lib", ["receive"])).toMatchObject({ code: 0, stdout: "No unread messages\n" });
  });

  test("a name only another project has goes there, with a warning; sent lists it as name@project", async () => {
    const sent = await run("claude@app", ["send", "helper", "help?"]);
    expect(sent.code).toBe(0);
    expect(sent.stderr).toContain('"helper" is no agent of this project; it works in project "toolbox"');
    expect(existsSync(mailbox("tools", "helper"))).toBe(true);
    expect((await run("helper@tools", ["receive"])).stdout).toContain("From: claude@app\n");
    expect((await run("claude@app", ["sent"])).stdout).toContain("to helper@toolbox  read ");
    const json = JSON.parse((await run("claude@app", ["sent", "--json"])).stdout) as { to: string }[];
    expect(json.map((copy) => copy.to)).toContain("helper@toolbox");
  });

  test("two other projects with the name: refused, naming both addresses", async () => {
    const refused = await run("claude@app", ["send", "reviewer", "which?", "--json"]);
    expect(refused.code).toBe(1);
    expect(JSON.parse(refused.stdout).error).toEqual({
      code: "ambiguous_recipient",
      message:
        '"reviewer" is no agent of this project, and 2 other projects have one: reviewer@lib, reviewer@toolbox; address the one you mean',
    });
  });

  test("explicit addresses: another project's, this project's own name, an unknown project or name", async () => {
    expect(await run("claude@app", ["send", "reviewer@toolbox", "by alias"])).toMatchObject({ code: 0 });
    expect(await run("claude@app", ["send", "reviewer@tools", "by directory"])).toMatchObject({ code: 0 });
    expect(await run("claude@app", ["send", "codex@app", "here"])).toMatchObject({ code: 0 });
    expect((await run("claude@app", ["send", "reviewer@nope", "x"])).stderr).toStartWith('error: no project named "nope"');
    expect((await run("claude@app", ["send", "revewer@lib", "x"])).stderr).toContain('did you mean "reviewer@lib"?');
    expect((await run("claude@app", ["send", "shell", "x"])).stderr).toStartWith('error: no window named "shell"');
  });

  test("recipients --all lists other projects' agents as name@project; plain recipients this project's only", async () => {
    const plain = JSON.parse((await run("claude@app", ["recipients", "--json"])).stdout) as { name: string }[];
    expect(plain.map((entry) => entry.name)).toEqual(["claude", "codex"]);
    const all = JSON.parse((await run("claude@app", ["recipients", "--all", "--json"])).stdout) as { name: string; project?: string }[];
    expect(all.map((entry) => entry.name)).toEqual(["claude", "codex", "claude@lib", "reviewer@lib", "helper@toolbox", "reviewer@toolbox"]);
    expect(all[2]).toMatchObject({ project: "lib", status: null });
  });

  test("mail from another project that expires unread bounces into its sender's own store", async () => {
    const sent = await run("codex@app", ["send", "claude@lib", "soon stale", "--ttl", "1s", "--json"]);
    const { id } = JSON.parse(sent.stdout) as { id: string };
    // Its time to live runs out: a condition on the clock, not a wait for something to happen.
    const line = readFileSync(mailbox("lib", "claude"), "utf8")
      .split("\n")
      .find((each) => each.includes(id))!;
    const expires = Date.parse((JSON.parse(line) as { expires_at: string }).expires_at);
    while (Date.now() <= expires) await Bun.sleep(20);
    expect((await run("claude@lib", ["receive"])).stdout).toBe("No unread messages\n");
    // codex first gets what claude sent it earlier, then the bounce.
    let bounce = "";
    for (let taken = ""; taken !== "No unread messages\n"; bounce += taken) taken = (await run("codex@app", ["receive"])).stdout;
    expect(bounce).toContain(`Your message ${id} to claude was not delivered`);
  });
});
