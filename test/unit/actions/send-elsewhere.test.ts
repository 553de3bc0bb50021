/**
 * Mail across projects, in process (the scenario test/scenarios/projects.test.ts runs the binary): a private tmux
 * server whose sessions work in two repositories with the same window names, and what routing, recipients --all,
 * sent and a bounce's return path make of them.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { configuredAlias, projectOf, repositoryAt, sortWindows } from "../../../src/identity/projects.ts";
import { senderAddress, parseAddress } from "../../../src/mail/addresses.ts";
import { runInProcess } from "../../support/in-process.ts";
import { RedisServer } from "../../support/redis-server.ts";
import {
  git,
  lostItsTerminal,
  NO_PATH_COMMAND,
  type Panes,
  repository as newRepository,
  session as newSession,
  SHELL,
} from "../../support/projects.ts";
import { TmuxServer } from "../../support/tmux-server.ts";
import { waitFor } from "../../support/wait.ts";

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
    await waitFor("its time to live to run out", () => Date.now() > expires, 60_000, 20);
    expect((await run("claude@lib", ["receive"])).stdout).toBe("No unread messages\n");
    // codex first gets what claude sent it earlier, then the bounce.
    let bounce = "";
    for (let taken = ""; taken !== "No unread messages\n"; bounce += taken) taken = (await run("codex@app", ["receive"])).stdout;
    expect(bounce).toContain(`Your message ${id} to claude was not delivered`);
  });
});

describe("routing's refusals and exceptions", () => {
  test("a window literally named name@project keeps its mail here", async () => {
    const odd = server.addWindow("odd@lib", dirs.app!);
    panes.set("odd@lib@app", { pane: odd.paneId, cwd: dirs.app! });
    try {
      expect(await run("claude@app", ["send", "odd@lib", "for the window"])).toMatchObject({ code: 0, stderr: "" });
      expect(existsSync(join(dirs.lib!, ".git", "mail", "odd.jsonl"))).toBe(false);
      expect((await run("odd@lib@app", ["receive"])).stdout).toContain("for the window");
    } finally {
      server.run(["kill-window", "-t", odd.windowId]);
    }
  });

  test("a role queue and another project's agent in one send: each gets its copy", async () => {
    expect(await run("codex@app", ["join", "tester"])).toMatchObject({ code: 0 });
    const sent = await run("claude@app", ["send", "-r", "role:tester", "-r", "claude@lib", "both", "--json"]);
    expect(sent).toMatchObject({ code: 0, stderr: "" });
    expect((await run("codex@app", ["receive"])).stdout).toContain("both");
    expect((await run("claude@lib", ["receive"])).stdout).toContain("both");
    const copies = JSON.parse((await run("claude@app", ["sent", "--json"])).stdout) as { id: string; to: string }[];
    const { id } = JSON.parse(sent.stdout) as { id: string };
    expect(
      copies
        .filter((copy) => copy.id === id)
        .map((copy) => copy.to)
        .sort(),
    ).toEqual(["claude@lib", "role:tester"]);
    expect(await run("codex@app", ["leave", "tester"])).toMatchObject({ code: 0 });
  });

  test("two windows of one name in the other project: refused, naming the panes, nothing stored", async () => {
    const second = server.run([
      "new-window",
      "-d",
      "-P",
      "-F",
      "#{window_id} #{pane_id}",
      "-t",
      "lib:",
      "-n",
      "reviewer",
      "-c",
      dirs.lib!,
      SHELL,
    ]);
    const [windowId, paneId] = second.trim().split(" ");
    try {
      const refused = await run("claude@app", ["send", "reviewer@lib", "which one?", "--json"]);
      expect(refused.code).toBe(1);
      expect(JSON.parse(refused.stdout).error).toMatchObject({
        code: "duplicate_name",
        message: expect.stringMatching(
          new RegExp(
            `^2 windows of project "lib" are named "reviewer" \\(panes %\\d+, ${paneId}\\); rename one there: tmux rename-window -t ${paneId} <new-name>$`,
          ),
        ),
      });
      expect(readFileSafe(mailbox("lib", "reviewer"))).not.toContain("which one?");
    } finally {
      server.run(["kill-window", "-t", windowId!]);
    }
  });

  /** A second repository named lib, elsewhere. */
  const twinRepository = (): string => {
    const twin = join(root, "elsewhere", "lib");
    if (!existsSync(twin)) {
      mkdirSync(twin, { recursive: true });
      git(["init", "-q", twin], root);
    }
    return twin;
  };

  test("two repositories of the same name: refused, naming both, nothing stored", async () => {
    const twin = twinRepository();
    server.run(["new-session", "-d", "-s", "twin", "-n", "reviewer", "-c", twin, SHELL]);
    try {
      const refused = await run("claude@app", ["send", "reviewer@lib", "which lib?", "--json"]);
      expect(refused.code).toBe(1);
      const error = JSON.parse(refused.stdout).error as { code: string; message: string };
      expect(error.code).toBe("ambiguous_recipient");
      expect(error.message).toStartWith('2 projects are named "lib" (');
      expect(error.message).toContain(twin);
      expect(error.message).toEndWith("give one an alias there: git config agentmail.project <alias>");
      expect(readFileSafe(join(twin, ".git", "mail", "reviewer.jsonl"))).toBe("");
      expect(readFileSafe(mailbox("lib", "reviewer"))).not.toContain("which lib?");
    } finally {
      server.run(["kill-session", "-t", "twin"]);
    }
  });

  test("a twin's window tmux gives no path for yet (as one just opened) still counts as the twin's: refused, naming both", async () => {
    const twin = twinRepository();
    // Its process gives up its terminal, so tmux, as for a window not yet started, says no path.
    const started = ["new-session", "-d", "-P", "-F", "#{pane_id} #{pane_pid}", "-s", "twin", "-n", "reviewer", "-c", twin];
    const [pane, panePid] = server
      .run([...started, ...NO_PATH_COMMAND])
      .trim()
      .split(" ") as [string, string];
    try {
      await waitFor("the twin's pane to let go of its terminal", () => lostItsTerminal(panePid));
      expect(server.run(["display-message", "-p", "-t", pane, "[#{pane_current_path}]"]).trim()).toBe("[]");
      const refused = await run("claude@app", ["send", "reviewer@lib", "which lib?", "--json"]);
      expect(JSON.parse(refused.stdout).error).toMatchObject({ code: "ambiguous_recipient", message: expect.stringContaining(twin) });
      expect(readFileSafe(mailbox("lib", "reviewer"))).not.toContain("which lib?");
    } finally {
      server.run(["kill-session", "-t", "twin"]);
    }
  });
});

const readFileSafe = (path: string) => (existsSync(path) ? readFileSync(path, "utf8") : "");

describe("on Redis, a project is a namespace", () => {
  let redis: RedisServer;
  beforeAll(async () => {
    redis = await RedisServer.start();
  });
  afterAll(async () => {
    await redis?.remove();
  });

  const inNamespace = (agent: string, namespace: string, args: string[]) =>
    runInProcess(args, {
      env: { ...server.agent("claude").env, TMUX_PANE: panes.get(agent)!.pane, AGENTMAIL_URL: redis.url, AGENTMAIL_NAMESPACE: namespace },
      cwd: panes.get(agent)!.cwd,
    });

  test("name@namespace reaches an agent registered there, and its reply comes back", async () => {
    // helper@tools works in namespace team-b: its receive registers it there.
    expect(await inNamespace("helper@tools", "team-b", ["receive"])).toEqual({ code: 0, stdout: "No unread messages\n", stderr: "" });
    const sent = await inNamespace("codex@app", "team-a", ["send", "helper@team-b", "over redis", "--json"]);
    expect(sent).toMatchObject({ code: 0, stderr: "" });
    const { id } = JSON.parse(sent.stdout) as { id: string };
    const taken = await inNamespace("helper@tools", "team-b", ["receive", "--json"]);
    const message = JSON.parse(taken.stdout) as { id: string; from: string; message: string };
    expect(message).toMatchObject({ id, from: "codex@team-a", message: "over redis" });
    expect(await inNamespace("helper@tools", "team-b", ["reply", id, "got it"])).toMatchObject({ code: 0, stderr: "" });
    const reply = await inNamespace("codex@app", "team-a", ["receive"]);
    expect(reply.stdout).toContain(`From: helper@team-b\n`);
    expect(reply.stdout).toContain("got it");
  });

  test("a name the namespace has no agent of: refused with did-you-mean, nothing stored", async () => {
    const refused = await inNamespace("codex@app", "team-a", ["send", "helpr@team-b", "typo"]);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain('project "team-b" has no agent named "helpr"; did you mean "helper@team-b"?');
    expect((await inNamespace("helper@tools", "team-b", ["receive"])).stdout).toBe("No unread messages\n");
  });
});
