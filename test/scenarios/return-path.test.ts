/**
 * Bounces of mail sent to another project go back to exactly the store they were sent from, end to end with the
 * compiled binary: two clones both named `app` and a `lib` on one tmux server (a session each; `a-first` is listed
 * first). The second clone's alice writes to lib's reviewer. Its bounce never goes into the first clone; while the
 * second clone is gone (moved away), the bounce is kept in lib's store, `doctor` there names it and the sender's
 * `sent` says where it waits; once the clone is back, the bounce goes on to it. A sender's mailbox that cannot be
 * written (a FIFO) keeps the bounce in lib too, and lib's reviewer's mail still flows (`receive`, `receive --hook`).
 */
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { appendFileSync, existsSync, mkdirSync, mkdtempSync, realpathSync, renameSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { am, expectSent, oneJson, shown, storedMessages } from "../support/e2e.ts";
import { type Panes, repository, session } from "../support/projects.ts";
import { TmuxServer } from "../support/tmux-server.ts";
import { printedPid, stopMailman, waitFor } from "../support/workflow.ts";
import { encodeName } from "../../src/mail/names.ts";

setDefaultTimeout(60_000);

let root: string;
let server: TmuxServer;
const dirs = {} as Record<"first" | "second" | "lib" | "tools" | "docs", string>;
const panes: Panes = new Map();

const envOf = (agent: string) => ({ ...server.agent("reviewer").env, TMUX_PANE: panes.get(agent)!.pane });
const run = (agent: string, args: string[]) => am(args, { env: envOf(agent), cwd: panes.get(agent)!.cwd });
const mailbox = (dir: string, name: string) => join(dir, ".git", "mail", `${encodeName(name)}.jsonl`);
const unread = (dir: string, name: string) =>
  (existsSync(mailbox(dir, name)) ? storedMessages(mailbox(dir, name)) : []).filter((m) => !m.read_flag);

/** `sender` sends lib's reviewer `body`, to run out in a second; returns its id once it has. */
async function expiring(sender: string, body: string): Promise<string> {
  const id = expectSent({ ...(await run(sender, ["send", "reviewer@lib", body, "--ttl", "1s"])), stderr: "" });
  const copy = storedMessages(mailbox(dirs.lib, "reviewer")).find((message) => message.id === id)!;
  await waitFor("the time to live to run out", () => Date.now() > Date.parse(String(copy.expires_at)) + 50);
  return id;
}

beforeAll(() => {
  root = realpathSync(mkdtempSync(join(tmpdir(), "agentmail-return-path-")));
  for (const [key, parent] of [
    ["first", "one"],
    ["second", "two"],
  ] as const) {
    mkdirSync(join(root, parent));
    dirs[key] = repository(join(root, parent), "app");
  }
  dirs.lib = repository(root, "lib");
  server = TmuxServer.start(["reviewer"], dirs.lib);
  panes.set("reviewer@lib", { pane: server.agent("reviewer").paneId, cwd: dirs.lib });
  session(server, panes, "a-first", "first", dirs.first, ["alice"]);
  session(server, panes, "b-second", "second", dirs.second, ["alice"]);
});

afterAll(() => {
  server?.stop();
  if (root) rmSync(root, { recursive: true, force: true });
});

describe("two clones named app", () => {
  test("the bounce goes to the clone it was sent from, never to the first one with the name", async () => {
    const id = await expiring("alice@second", "short-lived");
    expect((await run("reviewer@lib", ["receive"])).stdout).toBe("No unread messages\n");
    expect(unread(dirs.first, "alice")).toEqual([]);
    const bounce = (await run("alice@second", ["receive"])).stdout;
    expect(bounce).toStartWith("From: agentmail\n");
    expect(bounce).toContain(`Your message ${id} to reviewer was not delivered: its time to live ran out`);
  });

  test("while that clone is gone the bounce waits in lib, said by doctor and sent; back, it goes on to it", async () => {
    const id = await expiring("alice@second", "while you are away");
    const away = join(root, "two-away");
    renameSync(join(root, "two"), away);
    try {
      // Its recipient's mail flows: the expired message is taken out, nothing fails.
      const received = await run("reviewer@lib", ["receive"]);
      expect(received).toMatchObject({ code: 0, stdout: "No unread messages\n" });
      // Said as it happens, with where its bounce waits.
      expect(received.stderr).toStartWith(`returned ${id} to alice@app: its time to live ran out at `);
      expect(received.stderr).toContain(
        `; its bounce waits in ${join(dirs.lib, ".git", "mail")} until the store it was sent from takes it`,
      );
      expect(unread(dirs.first, "alice")).toEqual([]);
      const doctor = await run("reviewer@lib", ["doctor"]);
      expect(doctor.stdout).toContain('problem delivery: 1 bounce for "alice@app" kept in this store');
      expect(doctor.stdout).toContain("is gone (no git directory there now)");
    } finally {
      renameSync(away, join(root, "two"));
    }
    const copy = (
      oneJson(await run("alice@second", ["sent", "--json"])) as { id: string; delivery: { state: string; reason: string } }[]
    ).find((each) => each.id === id)!;
    expect(copy.delivery.state).toBe("bounced");
    expect(copy.delivery.reason).toContain(
      `its bounce waits in ${join(dirs.lib, ".git", "mail")} until the store it was sent from takes it`,
    );
    const cleanup = await run("reviewer@lib", ["cleanup"]);
    expect(cleanup.stdout).toContain("sent on the bounce ");
    expect(cleanup.stdout).toContain(" kept here for alice@app\n");
    const bounce = (await run("alice@second", ["receive"])).stdout;
    expect(bounce).toContain(`Your message ${id} to reviewer was not delivered: its time to live ran out`);
    expect(unread(dirs.first, "alice")).toEqual([]);
    expect((await run("reviewer@lib", ["doctor"])).stdout).not.toContain("kept in this store");
  });
});

describe("a mailbox of bounces kept for another project's sender", () => {
  test("is no agent: mailman status, recipients and doctor's delivery lines never name it; doctor counts its bounces", async () => {
    // docs's writer writes to lib's reviewer; docs moves away before the bounce can go back: it waits in lib.
    dirs.docs = repository(root, "docs");
    session(server, panes, "docs", "docs", dirs.docs, ["writer"]);
    const id = await expiring("writer@docs", "kept while docs is away");
    const later = expectSent({ ...(await run("writer@docs", ["send", "reviewer@lib", "for the mailman to look at"])), stderr: "" });
    const away = join(root, "docs-away");
    renameSync(dirs.docs, away);
    const pids = new Set<number>();
    const lib = { env: envOf("reviewer@lib"), cwd: dirs.lib };
    try {
      expect(await run("reviewer@lib", ["cleanup", "--json"])).toMatchObject({ code: 0 });
      expect(unread(dirs.lib, "writer@docs").map((message) => message.bounce_of)).toEqual([id]);
      const started = await am(["mailman", "--daemon", "--interval", "600", "--sweep", "0.3"], lib);
      expect(started.code).toBe(0);
      const pid = printedPid(started.stdout);
      if (pid) pids.add(pid);
      // One sweep looks at every mailbox: once it noted reviewer (a shell, no agent CLI), it passed writer@docs.
      type Status = { agents: { name: string; outcome: string }[] };
      const status = await waitFor("the mailman to look at reviewer", async () => {
        const seen = oneJson(await am(["mailman", "status", "--json"], lib)) as Status;
        return seen.agents.some((agent) => agent.name === "reviewer") ? seen : null;
      });
      expect(status.agents.map((agent) => agent.name)).toEqual(["reviewer"]);
      expect((await am(["mailman", "status"], lib)).stdout).not.toContain("writer@docs");
      // Nothing was tried for it: no delivery event (unreachable, no window) was recorded on the bounce.
      expect(existsSync(`${mailbox(dirs.lib, "writer@docs")}.delivery`)).toBe(false);
      expect((await run("reviewer@lib", ["recipients", "--json"])).stdout).not.toContain("writer@docs");
      const doctor = (await run("reviewer@lib", ["doctor"])).stdout;
      expect(doctor).toContain('problem delivery: 1 bounce for "writer@docs" kept in this store');
      expect(doctor.match(/writer@docs/g)).toHaveLength(1);
    } finally {
      await stopMailman(lib, pids);
      renameSync(away, dirs.docs);
    }
    expect((await run("reviewer@lib", ["receive"])).stdout).toBe(shown("writer@docs", later, "for the mailman to look at"));
    expect((await run("reviewer@lib", ["cleanup", "--json"])).code).toBe(0);
    expect((await run("writer@docs", ["receive"])).stdout).toContain(`Your message ${id} to reviewer was not delivered`);
  });
});

describe("a sender's mailbox that cannot be written", () => {
  test("a FIFO in the sender's store stops neither receive nor the hook; the bounce waits here, then goes on", async () => {
    // A project of a name of its own (no other clone to mistake it for): tools, its dev writing to lib's reviewer.
    dirs.tools = repository(root, "tools");
    session(server, panes, "tools", "tools", dirs.tools, ["dev"]);
    const fifo = mailbox(dirs.tools, "dev");
    mkdirSync(join(dirs.tools, ".git", "mail"), { recursive: true });
    expect(Bun.spawnSync(["mkfifo", fifo]).exitCode).toBe(0);
    try {
      const first = await expiring("dev@tools", "into a FIFO");
      const later = expectSent({ ...(await run("dev@tools", ["send", "reviewer@lib", "still flows"])), stderr: "" });
      const received = await run("reviewer@lib", ["receive"]);
      expect(received).toMatchObject({ code: 0, stdout: shown("dev@tools", later, "still flows") });
      expect(received.stderr).toStartWith(`returned ${first} to dev@tools: its time to live ran out at `);
      const second = await expiring("dev@tools", "into a FIFO, at the hook");
      const last = expectSent({ ...(await run("dev@tools", ["send", "reviewer@lib", "at the end of a turn"])), stderr: "" });
      const hook = await run("reviewer@lib", ["receive", "--hook"]);
      expect(hook.code).toBe(2);
      expect(hook.stderr).toContain(`ID: ${last}`);
      expect(hook.stderr).not.toContain("into a FIFO");
      expect((await run("reviewer@lib", ["doctor"])).stdout).toContain('problem delivery: 2 bounces for "dev@tools" kept in this store');
      rmSync(fifo);
      expect((await run("reviewer@lib", ["cleanup", "--json"])).code).toBe(0);
      expect(
        unread(dirs.tools, "dev")
          .map((message) => message.bounce_of)
          .sort(),
      ).toEqual([first, second].sort());
    } finally {
      rmSync(fifo, { force: true });
    }
  });
});

describe("a copy stored before copies recorded their sender's store", () => {
  test("its bounce goes to the one project of that name on the server, and waits while two have it", async () => {
    // As an earlier agentmail stored it: from alice@app, no sender_store.
    const copy = {
      id: "OldCopy1",
      from: "alice@app",
      to: "reviewer",
      message: "from before",
      read_flag: false,
      created_at: new Date(Date.now() - 60_000).toISOString(),
      expires_at: new Date(Date.now() - 1_000).toISOString(),
    };
    appendFileSync(mailbox(dirs.lib, "reviewer"), `${JSON.stringify(copy)}\n`);
    expect((await run("reviewer@lib", ["receive"])).stdout).toBe("No unread messages\n");
    expect(unread(dirs.first, "alice")).toEqual([]);
    expect(unread(dirs.second, "alice")).toEqual([]);
    const doctor = (await run("reviewer@lib", ["doctor"])).stdout;
    expect(doctor).toContain('2 repositories are named "app"');
    // The first clone's window gone: one app is left on the server, and the bounce goes there.
    server.run(["kill-session", "-t", "a-first"]);
    expect((await run("reviewer@lib", ["cleanup"])).code).toBe(0);
    expect(unread(dirs.second, "alice").map((message) => message.bounce_of)).toEqual(["OldCopy1"]);
    expect(unread(dirs.first, "alice")).toEqual([]);
  });
});
