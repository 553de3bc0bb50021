/**
 * Which panes are this project's, and whether a route kept from before still leads into an agent's window
 * (src/mailman/panes.ts), against two private tmux servers: the first has this project's alice and bob and another
 * project's alice; the second this project's alice again, whose pane id (%0) is the first server's alice's too. In
 * each alice a program runs in the foreground with a child under it, as an agent CLI does. The mailman keeps a route
 * only while it leads into this project's agent of that name on its own server (test/unit/mailman/loop.test.ts
 * drives the mailman itself).
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import type { Route } from "../../../src/mail/route.ts";
import { projectPanes, routeInPanes } from "../../../src/mailman/panes.ts";
import { boundaryOf, type ProjectBoundary } from "../../../src/identity/projects.ts";
import type { Pane } from "../../../src/tmux/windows.ts";
import { tempRepo } from "../../support/repo.ts";
import { TmuxServer } from "../../support/tmux-server.ts";
import { waitFor } from "../../support/wait.ts";

let app: ReturnType<typeof tempRepo>;
let lib: ReturnType<typeof tempRepo>;
let first: TmuxServer;
let second: TmuxServer;
let boundary: ProjectBoundary | null;
let panes: Pane[];
/** Each running program's pid (the pane's foreground) and its child's, by `<server>:<window>`. */
const programs = new Map<string, { leader: number; child: number }>();

/** Starts, at the prompt of `pane`, a program with a child under it; their pids once both run. */
async function startProgram(server: TmuxServer, pane: string, key: string, cwd: string) {
  const file = (what: string) => join(cwd, `.${key.replace(/\W/g, "-")}.${what}`);
  server.run(["send-keys", "-t", pane, "-l", `sh -c 'sleep 600 & echo $! > ${file("child")}; echo $$ > ${file("leader")}; wait'`]);
  server.run(["send-keys", "-t", pane, "Enter"]);
  await waitFor(`the program in ${key} to start`, () => existsSync(file("leader")) && readFileSync(file("leader"), "utf8").endsWith("\n"));
  await waitFor(`the child in ${key} to start`, () => existsSync(file("child")) && readFileSync(file("child"), "utf8").endsWith("\n"));
  programs.set(key, { leader: Number(readFileSync(file("leader"), "utf8")), child: Number(readFileSync(file("child"), "utf8")) });
}

beforeAll(async () => {
  app = tempRepo();
  lib = tempRepo();
  first = TmuxServer.start(["alice", "bob"], app.dir);
  const libAlice = first
    .run(["new-window", "-d", "-P", "-F", "#{pane_id}", "-n", "alice", "-c", lib.dir, "bash --norc --noprofile -i"])
    .trim();
  second = TmuxServer.start(["alice"], app.dir);
  await startProgram(first, first.agent("alice").paneId, "first:alice", app.dir);
  await startProgram(first, libAlice, "first:lib-alice", lib.dir);
  await startProgram(second, second.agent("alice").paneId, "second:alice", app.dir);
  const env = first.agent("bob").env;
  boundary = await boundaryOf({ cwd: app.dir, env });
  panes = (await projectPanes(env, boundary))!;
});
afterAll(() => {
  first.stop();
  second.stop();
  app.remove();
  lib.remove();
});

const route = (pane: string, pid: unknown): Route => ({ channel: "claude-inbox", pane, socket: "/unused", pid }) as Route;

describe("this project's panes", () => {
  test("the server's panes that work in this project: another project's alice on the same server is left out", async () => {
    expect(panes.map((pane) => [pane.windowName, pane.paneId])).toEqual([
      ["alice", first.agent("alice").paneId],
      ["bob", first.agent("bob").paneId],
    ]);
    expect(first.agent("alice").paneId).toBe(second.agent("alice").paneId);
  });

  test("no tmux server to ask: null", async () => {
    // Outside tmux, with no server at the default socket (TMUX_TMPDIR names where it would be).
    expect(await projectPanes({ PATH: process.env.PATH, TMUX_TMPDIR: app.dir }, boundary)).toBeNull();
  });
});

describe("a route kept from before", () => {
  test("leads into the agent's window when its process is the pane's foreground program, or runs under it", () => {
    const { leader, child } = programs.get("first:alice")!;
    const pane = first.agent("alice").paneId;
    expect(routeInPanes("alice", route(pane, leader), panes)).toBe(true);
    expect(routeInPanes("alice", route(pane, child), panes)).toBe(true);
  });

  test("not into another agent's window, nor through another pane", () => {
    const { leader } = programs.get("first:alice")!;
    expect(routeInPanes("bob", route(first.agent("alice").paneId, leader), panes)).toBe(false);
    expect(routeInPanes("alice", route(first.agent("bob").paneId, leader), panes)).toBe(false);
  });

  test("not into the same pane id on another tmux server, nor into another project's window of the name", () => {
    const other = programs.get("second:alice")!;
    expect(routeInPanes("alice", route(second.agent("alice").paneId, other.leader), panes)).toBe(false);
    expect(routeInPanes("alice", route(second.agent("alice").paneId, other.child), panes)).toBe(false);
    const elsewhere = programs.get("first:lib-alice")!;
    expect(routeInPanes("alice", route(first.agent("alice").paneId, elsewhere.leader), panes)).toBe(false);
  });

  test("not when the pane's shell, above the program, is what it names, nor when its pid is no number (a routes file is read, not trusted)", () => {
    const alice = panes.find((pane) => pane.windowName === "alice")!;
    expect(routeInPanes("alice", route(alice.paneId, alice.panePid), panes)).toBe(false);
    expect(routeInPanes("alice", route(alice.paneId, undefined), panes)).toBe(false);
    expect(routeInPanes("alice", route(alice.paneId, String(programs.get("first:alice")!.child)), panes)).toBe(false);
  });

  test("not once its process has ended", async () => {
    const { child } = programs.get("first:alice")!;
    process.kill(child, "SIGTERM");
    await waitFor("the program's child to end", () => !existsSync(`/proc/${child}`));
    expect(routeInPanes("alice", route(first.agent("alice").paneId, child), panes)).toBe(false);
  });
});
