/**
 * Addresses across projects on one tmux server, against the compiled binary: two repositories (`app` and `lib`),
 * each with its own tmux session whose windows carry the same names (`claude`, `codex`), `lib` with a `reviewer`
 * that `app` has not, and a worktree of `app` (one project with it). Then a third repository with a second
 * `reviewer`, and on Redis two namespaces. Checks are on what a user sees: ids, stored copies, words, exit codes.
 */
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { existsSync, mkdtempSync, realpathSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { am, expectError, expectJsonError, expectSent, oneJson, shown, start, storedMessages } from "../support/e2e.ts";
import { RedisServer } from "../support/redis-server.ts";
import { git, type Panes, repository as newRepository, session as newSession } from "../support/projects.ts";
import { TmuxServer } from "../support/tmux-server.ts";
import { waitFor } from "../support/wait.ts";

setDefaultTimeout(60_000);

let root: string;
let server: TmuxServer;
const dirs = {} as Record<"app" | "lib" | "wt" | "other", string>;
/** Each agent's pane and working directory, by `name@project`. */
const panes: Panes = new Map();

const repository = (name: string, origin?: string) => newRepository(root, name, origin);
/** A session of windows working in `dir`, as `name@project`. */
const session = (name: string, project: string, dir: string, windows: string[]) => newSession(server, panes, name, project, dir, windows);

const envOf = (agent: string, extra: Record<string, string> = {}) => ({
  ...server.agent("claude").env,
  TMUX_PANE: panes.get(agent)!.pane,
  ...extra,
});
const run = (agent: string, args: string[], extra: Record<string, string> = {}) =>
  am(args, { env: envOf(agent, extra), cwd: panes.get(agent)!.cwd });
const mailbox = (project: keyof typeof dirs, name: string) => join(dirs[project]!, ".git", "mail", `${name}.jsonl`);

beforeAll(() => {
  root = realpathSync(mkdtempSync(join(tmpdir(), "agentmail-projects-")));
  dirs.app = repository("app");
  dirs.lib = repository("lib");
  git(["commit", "-q", "--allow-empty", "-m", "start"], dirs.app);
  dirs.wt = join(root, "app-wt");
  git(["worktree", "add", "-q", dirs.wt], dirs.app);
  // The fixture's session "agents" holds app's claude; the rest are added beside it.
  server = TmuxServer.start(["claude"], dirs.app);
  panes.set("claude@app", { pane: server.agent("claude").paneId, cwd: dirs.app });
  for (const name of ["codex", "wt"]) {
    const added = server.addWindow(name, name === "wt" ? dirs.wt : dirs.app);
    panes.set(`${name}@app`, { pane: added.paneId, cwd: name === "wt" ? dirs.wt : dirs.app });
  }
  session("lib", "lib", dirs.lib, ["claude", "codex", "reviewer"]);
});

afterAll(() => {
  server?.stop();
  if (root) rmSync(root, { recursive: true, force: true });
});

describe("two sessions of two repositories with the same window names", () => {
  test("send and receive by a shared name stay in each project, with no duplicate_name", async () => {
    const id = expectSent(await run("claude@app", ["send", "codex", "app's codex only"]));
    expect(storedMessages(mailbox("app", "codex")).map((message) => message.id)).toEqual([id]);
    expect(existsSync(mailbox("lib", "codex"))).toBe(false);
    expect((await run("codex@lib", ["receive"])).stdout).toBe("No unread messages\n");
    expect((await run("codex@app", ["receive"])).stdout).toBe(shown("claude", id, "app's codex only"));
    const back = expectSent(await run("codex@lib", ["send", "claude", "lib's claude only"]));
    expect((await run("claude@app", ["receive"])).stdout).toBe("No unread messages\n");
    expect((await run("claude@lib", ["receive"])).stdout).toBe(shown("codex", back, "lib's claude only"));
    // doctor agrees: two projects' windows of one name share no mailbox.
    const doctor = await run("claude@app", ["doctor"]);
    expect(doctor.stdout + doctor.stderr).toContain('ok tmux: you are "claude"');
    expect(doctor.stdout + doctor.stderr).not.toContain('windows are named "claude"');
  });

  test("a worktree of the repository is the same project: its window is addressed by name", async () => {
    const id = expectSent(await run("claude@app", ["send", "wt", "from the main checkout"]));
    expect((await run("wt@app", ["receive"])).stdout).toBe(shown("claude", id, "from the main checkout"));
  });

  test("recipients lists this project's agents with status and last seen; --all adds other projects' as name@project", async () => {
    expect((await run("codex@lib", ["status", "work"])).code).toBe(0);
    expect((await run("claude@app", ["status", "ready"])).code).toBe(0);
    const text = (await run("claude@app", ["recipients"])).stdout;
    expect(text.split("\n").map((line) => line.split(" ")[0])).toEqual(["claude", "codex", "wt", ""]);
    expect(text).toMatch(/^claude \[you\] {2}ready, seen \d+s ago\ncodex\n/);
    const json = oneJson(await run("claude@app", ["recipients", "--all", "--json"])) as Record<string, unknown>[];
    expect(json.map((entry) => entry.name)).toEqual(["claude", "codex", "wt", "claude@lib", "codex@lib", "reviewer@lib"]);
    expect(json[0]).toMatchObject({ you: true, status: "ready", last_seen: expect.any(String) });
    expect(json[1]).toMatchObject({ name: "codex", status: null, last_seen: null });
    expect(json.find((entry) => entry.name === "codex@lib")).toMatchObject({
      project: "lib",
      status: "work",
      last_seen: expect.any(String),
    });
    expect((await run("claude@app", ["recipients", "--all"])).stdout).toContain("\ncodex@lib  work, seen ");
  });

  test("an agent whose window closed is gone though another project's window has its name: cleanup returns its mail and forgets it", async () => {
    // app's scout registers and gets mail, then its window closes; lib's scout (the same name) works on.
    session("scouts", "lib", dirs.lib, ["scout"]);
    panes.set("scout@app", { pane: server.addWindow("scout", dirs.app).paneId, cwd: dirs.app });
    try {
      const registered = await run("scout@app", ["status", "work"]);
      expect(registered).toMatchObject({ code: 0, stderr: "" });
      const id = expectSent(await run("claude@app", ["send", "scout", "for app's scout"]));
      server.run(["kill-window", "-t", server.agent("scout").windowId]);
      const sentAt = Date.parse(String(storedMessages(mailbox("app", "scout"))[0]!.created_at));
      while (Date.now() <= sentAt + 1_100) await Bun.sleep(50);
      const cleaned = await run("claude@app", ["cleanup", "--json"], { AGENTMAIL_GONE_AFTER: "1s" });
      const report = oneJson(cleaned) as { bounced: { id: string; name: string }[]; forgotten: { name: string; reason: string }[] };
      expect(report.bounced).toEqual([expect.objectContaining({ id, name: "scout" })]);
      expect(report.forgotten).toContainEqual({ name: "scout", reason: "window gone" });
      expect((await run("claude@app", ["receive"])).stdout).toContain(`Your message ${id} to scout was not delivered: scout has been gone`);
      expect((await run("scout@lib", ["receive"])).stdout).toBe("No unread messages\n");
    } finally {
      server.run(["kill-session", "-t", "scouts"]);
    }
  });
});

describe("an agent that works in another repository on the same server", () => {
  test("mail to a name only another project has goes into that project's store, and the sender is told on stderr", async () => {
    const sent = await run("claude@app", ["send", "reviewer", "please review #12"]);
    const id = expectSent({ ...sent, stderr: "" });
    expect(sent.stderr).toContain('"reviewer" is no agent of this project; it works in project "lib"');
    expect(sent.stderr).toContain("reviewer@lib");
    expect(existsSync(mailbox("app", "reviewer"))).toBe(false);
    expect(storedMessages(mailbox("lib", "reviewer"))[0]).toMatchObject({ id, from: "claude@app", to: "reviewer" });
    expect((await run("reviewer@lib", ["receive"])).stdout).toBe(shown("claude@app", id, "please review #12"));
    // The sender follows it there: sent lists the copy in lib's store, its recipient as reviewer@lib.
    expect((await run("claude@app", ["sent"])).stdout).toMatch(
      new RegExp(`^${id}  \\d+s  to reviewer@lib  read \\S+Z  please review #12\\n`),
    );
    // The reply goes back to the project it came from, to app's claude (lib has a claude of its own).
    const reply = expectSent(await run("reviewer@lib", ["reply", id, "LGTM"]));
    expect(existsSync(mailbox("lib", "claude")) ? storedMessages(mailbox("lib", "claude")).map((m) => m.id) : []).not.toContain(reply);
    const received = (await run("claude@app", ["receive"])).stdout;
    expect(received).toStartWith(`From: reviewer@lib\nID: ${reply}\n`);
    expect(received).toEndWith(`In-Reply-To: ${id}\n\n> LGTM\n`);
  });

  test("name@project addresses another project's agent explicitly; this project's own name means here", async () => {
    const there = expectSent(await run("codex@app", ["send", "claude@lib", "to lib's claude"]));
    expect((await run("claude@lib", ["receive"])).stdout).toBe(shown("codex@app", there, "to lib's claude"));
    const here = expectSent(await run("codex@app", ["send", "claude@app", "to app's claude"]));
    expect((await run("claude@app", ["receive"])).stdout).toBe(shown("codex", here, "to app's claude"));
  });

  test("an unknown name in a project, and an unknown project, are refused with did-you-mean and store nothing", async () => {
    const name = expectJsonError(await run("claude@app", ["send", "reviewr@lib", "x", "--json"]), 1);
    expect(name.code).toBe("unknown_recipient");
    expect(name.message).toContain('project "lib" has no agent named "reviewr"; did you mean "reviewer@lib"?');
    const project = expectError(await run("claude@app", ["send", "reviewer@lbi", "x"]), 1);
    expect(project).toContain('no project named "lbi" has an agent on this tmux server; did you mean "lib"?');
    expect(project).toContain("agentmail recipients --all");
    expect(existsSync(mailbox("lib", "reviewr"))).toBe(false);
  });

  test("send --wait-for reply to another project's agent returns its reply", async () => {
    const waiting = start(["send", "reviewer", "ship it?", "--wait-for", "reply", "--timeout", "60"], {
      env: envOf("claude@app"),
      cwd: dirs.app,
      timeoutMs: 90_000,
    });
    const id = await waitFor(
      "the message to reach lib's reviewer",
      () => storedMessages(mailbox("lib", "reviewer")).find((message) => !message.read_flag)?.id,
    );
    expect((await run("reviewer@lib", ["receive"])).stdout).toContain("ship it?");
    const reply = expectSent(await run("reviewer@lib", ["reply", id, "shipped"]));
    const done = await waiting.done;
    expect(done.code).toBe(0);
    expect(done.stdout).toStartWith(`${id}\nFrom: reviewer@lib\nID: ${reply}\n`);
    expect(done.stdout).toEndWith(`In-Reply-To: ${id}\n\n> shipped\n`);
  });

  test("mail to another project's agent that expires unread bounces back into the sender's own store, once", async () => {
    const id = expectSent({ ...(await run("claude@app", ["send", "reviewer@lib", "short-lived", "--ttl", "1s"])), stderr: "" });
    const expires = Date.parse(String(storedMessages(mailbox("lib", "reviewer")).find((message) => message.id === id)!.expires_at));
    await waitFor("its time to live to run out", () => Date.now() > expires + 50);
    expect((await run("reviewer@lib", ["receive"])).stdout).toBe("No unread messages\n");
    const bounce = (await run("claude@app", ["receive"])).stdout;
    expect(bounce).toStartWith("From: agentmail\n");
    expect(bounce).toContain(`Your message ${id} to reviewer was not delivered: its time to live ran out`);
    expect((await run("claude@app", ["receive"])).stdout).toBe("No unread messages\n");
  });

  test("a name two other projects have is refused, naming the address that picks each", async () => {
    dirs.other = repository("other");
    session("other", "other", dirs.other, ["reviewer"]);
    try {
      const error = expectJsonError(await run("claude@app", ["send", "reviewer", "which one?", "--json"]), 1);
      expect(error).toEqual({
        code: "ambiguous_recipient",
        message:
          '"reviewer" is no agent of this project, and 2 other projects have one: reviewer@lib, reviewer@other; address the one you mean',
      });
      const id = expectSent(await run("claude@app", ["send", "reviewer@other", "this one"]));
      expect((await run("reviewer@other", ["receive"])).stdout).toBe(shown("claude@app", id, "this one"));
    } finally {
      server.run(["kill-session", "-t", "other"]);
    }
  });

  test("a configured alias names a project: git config agentmail.project", async () => {
    git(["config", "agentmail.project", "library"], dirs.lib);
    try {
      const id = expectSent(await run("claude@app", ["send", "reviewer@library", "by alias"]));
      expect((await run("reviewer@lib", ["receive"])).stdout).toBe(shown("claude@app", id, "by alias"));
      const json = oneJson(await run("claude@app", ["recipients", "--all", "--json"])) as { name: string }[];
      expect(json.map((entry) => entry.name)).toContain("reviewer@library");
    } finally {
      git(["config", "--unset", "agentmail.project"], dirs.lib);
    }
  });
});

describe("on Redis a namespace is a project", () => {
  let redis: RedisServer;
  let url: string;
  const withRedis = (extra: Record<string, string> = {}) => ({ AGENTMAIL_URL: url, ...extra });

  beforeAll(async () => {
    redis = await RedisServer.start();
    url = redis.url;
    git(["remote", "add", "origin", "https://example.com/team/app"], dirs.app);
    git(["remote", "add", "origin", "https://example.com/team/lib"], dirs.lib);
  });

  afterAll(async () => {
    await redis?.remove();
  });

  test("the same names in two namespaces stay apart; a name only the other has goes there, name@namespace too", async () => {
    const id = expectSent(await run("claude@app", ["send", "codex", "app's codex"], withRedis()));
    expect((await run("codex@lib", ["receive"], withRedis())).stdout).toBe("No unread messages\n");
    expect((await run("codex@app", ["receive"], withRedis())).stdout).toBe(shown("claude", id, "app's codex"));
    const sent = await run("claude@app", ["send", "reviewer", "across namespaces"], withRedis());
    expect(sent.stderr).toContain('it works in project "example.com/team/lib"');
    const across = expectSent({ ...sent, stderr: "" });
    expect((await run("reviewer@lib", ["receive"], withRedis())).stdout).toBe(
      shown("claude@example.com/team/app", across, "across namespaces"),
    );
    const explicit = expectSent(await run("codex@app", ["send", "claude@example.com/team/lib", "explicit"], withRedis()));
    expect((await run("claude@lib", ["receive"], withRedis())).stdout).toBe(shown("codex@example.com/team/app", explicit, "explicit"));
  });

  test("name@namespace reaches an agent registered there from another host, with no window here", async () => {
    const elsewhere = { AGENTMAIL_NAMESPACE: "team-b", AGENTMAIL_HOST: "host-b" };
    expect((await run("reviewer@lib", ["status", "ready"], withRedis(elsewhere))).code).toBe(0);
    const id = expectSent(await run("claude@app", ["send", "reviewer@team-b", "over the wire"], withRedis()));
    expect((await run("reviewer@lib", ["receive"], withRedis(elsewhere))).stdout).toBe(
      shown("claude@example.com/team/app", id, "over the wire"),
    );
    const unknown = expectError(await run("claude@app", ["send", "nobody@team-b", "x"], withRedis()), 1);
    expect(unknown).toContain('project "team-b" has no agent named "nobody"');
  });

  test("recipients --all lists every namespace's registered agents, those with no window on this tmux server too", async () => {
    const elsewhere = { AGENTMAIL_NAMESPACE: "team-c", AGENTMAIL_HOST: "host-c" };
    expect((await run("codex@lib", ["status", "work"], withRedis(elsewhere))).code).toBe(0);
    // lib's reviewer registered in lib's namespace, beside its windows.
    expect((await run("reviewer@lib", ["status", "ready"], withRedis())).code).toBe(0);
    const listed = oneJson(await run("claude@app", ["recipients", "--all", "--json"], withRedis())) as {
      name: string;
      status: string | null;
      project?: string;
    }[];
    expect(listed.filter((entry) => entry.project === "team-c")).toEqual([
      expect.objectContaining({ name: "codex@team-c", status: "work", project: "team-c" }),
    ]);
    expect(listed.map((entry) => entry.name)).toContain("reviewer@example.com/team/lib");
    expect(listed.find((entry) => entry.name === "reviewer@example.com/team/lib")?.status).toBe("ready");
    // Its own namespace is not another project.
    expect(listed.some((entry) => entry.project === "example.com/team/app")).toBe(false);
    const text = (await run("claude@app", ["recipients", "--all"], withRedis())).stdout;
    expect(text).toContain("\ncodex@team-c  work, seen ");
  });
});
