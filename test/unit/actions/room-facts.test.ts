/**
 * What the mail room (src/actions/room.ts) learns outside the mail, in process against a private tmux server of two
 * projects, the person outside tmux: from each registered agent's pane, the agent CLI in it, a shell at its prompt, a
 * window closed; every claim judged (live, ended because its holder went offline, its waiters); the room of every
 * project, with the other project's agents and claims as `name@project` (its claims left out when they cannot be
 * read); a person set offline by a view elsewhere registered again; and a room that cannot be opened leaving no mark
 * of the view behind. The person's registration and the mailman's reach are test/unit/actions/room.test.ts.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, realpathSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { leaveRoom, openRoom, otherProjects } from "../../../src/actions/room.ts";
import { createMessage } from "../../../src/mail/message.ts";
import type { AgentRow } from "../../../src/room/model.ts";
import type { Room } from "../../../src/room/room.ts";
import { FileStore } from "../../../src/store/file/file-store.ts";
import { PERSON_PANE } from "../../../src/store/store.ts";
import type { Store } from "../../../src/store/store.ts";
import { fakeClaude, installFakeAgents, startFakeAgent } from "../../support/fake-agent.ts";
import { runInProcess } from "../../support/in-process.ts";
import { repository } from "../../support/projects.ts";
import { outsideTmuxEnv, TmuxServer } from "../../support/tmux-server.ts";
import { waitFor } from "../../support/wait.ts";

let root: string;
let app: string;
let lib: string;
let server: TmuxServer;
let appStore: FileStore;
let libStore: FileStore;

/** An agent's command, run in its pane as it would run it (HOME is the test's: no real settings are read). */
const as = (name: string, args: string[], cwd = app) => runInProcess(args, { env: { ...server.agent(name).env, HOME: root }, cwd });

beforeAll(async () => {
  root = realpathSync(mkdtempSync(join(tmpdir(), "agentmail-room-facts-")));
  app = repository(root, "app");
  lib = repository(root, "lib");
  server = TmuxServer.start(["alice", "bob", "carol", "erin"], app);
  server.addWindow("dave", lib);
  appStore = new FileStore(join(app, ".git", "mail"));
  libStore = new FileStore(join(lib, ".git", "mail"));
  await startFakeAgent(server, "alice", fakeClaude(installFakeAgents(root)));
  for (const name of ["alice", "bob", "carol", "erin"]) expect((await as(name, ["status", "ready"])).code).toBe(0);
  expect((await as("dave", ["status", "ready"], lib)).code).toBe(0);
  // Claims: alice's, with bob waiting on it; carol's, whose holder then went offline; dave's in the other project.
  expect((await as("alice", ["claim", "src/a.ts", "--reason", "refactoring"])).code).toBe(0);
  expect((await as("bob", ["claim", "src/a.ts"])).code).toBe(1);
  expect((await as("carol", ["claim", "src/c.ts"])).code).toBe(0);
  expect((await as("carol", ["status", "offline"])).code).toBe(0);
  expect((await as("dave", ["claim", "lib/d.ts"], lib)).code).toBe(0);
  // Unread mail for bob (a shell at its prompt) and erin (whose window is then closed).
  await appStore.append(createMessage("alice", "bob", "please review"));
  await appStore.append(createMessage("alice", "erin", "are you there?"));
  server.run(["kill-window", "-t", server.agent("erin").windowId]);
});
afterAll(() => {
  server.stop();
  rmSync(root, { recursive: true, force: true });
});

/** The person, running `web` or `watch` from a terminal outside tmux in this project; view marks under the scratch root. */
const person = () => ({ cwd: app, env: outsideTmuxEnv({ HOME: root, XDG_RUNTIME_DIR: root }) });

const rooms: Room[] = [];
async function open(settings: Parameters<typeof openRoom>[2] = {}, human: string | null = "ana"): Promise<Room> {
  const room = await openRoom(person(), human, settings);
  rooms.push(room);
  return room;
}
afterAll(() => {
  for (const room of rooms) room.close();
});

const row = (room: Room, name: string): AgentRow => room.agents().find((agent) => agent.name === name)!;

/** `store`, but each of `methods` fails with `message`. */
function failing(store: Store, methods: string[], message: string): Store {
  return new Proxy(store, {
    get(target, key) {
      if (typeof key === "string" && methods.includes(key)) return () => Promise.reject(new Error(message));
      const value = Reflect.get(target, key, target);
      return typeof value === "function" ? value.bind(target) : value;
    },
  });
}

describe("what the panes say", () => {
  test("the agent CLI in a pane; a shell at its prompt, which no mail can be put before; a closed window", async () => {
    const room = await open();
    expect(row(room, "alice")).toMatchObject({ cli: "claude", problem: null });
    expect(row(room, "bob")).toMatchObject({
      cli: null,
      problem: { kind: "unreachable", reason: "its pane runs a shell (bash), no agent CLI" },
    });
    expect(row(room, "erin")).toMatchObject({ cli: null, problem: { kind: "gone", reason: "its window is closed; 1 unread message" } });
    expect(row(room, "carol")).toMatchObject({ status: "offline", problem: { kind: "gone", reason: "offline; holds 1 claim" } });
  });
});

describe("what the claims say", () => {
  test("each claim judged: live with its waiters, or ended because its holder went offline", async () => {
    const claims = (await open()).claims().map(({ path, holder, project, shared, reason, waiters, state, why, holder_gone }) => ({
      path,
      holder,
      project,
      shared,
      reason,
      waiters,
      state,
      why,
      holder_gone,
    }));
    expect(claims).toEqual([
      {
        path: "src/a.ts",
        holder: "alice",
        project: null,
        shared: false,
        reason: "refactoring",
        waiters: ["bob"],
        state: "live",
        why: null,
        holder_gone: false,
      },
      {
        path: "src/c.ts",
        holder: "carol",
        project: null,
        shared: false,
        reason: null,
        waiters: [],
        state: "ended",
        why: "its holder went offline",
        holder_gone: true,
      },
    ]);
  });
});

describe("the room of every project", () => {
  test("the other project's agents and claims are there as name@project; this project's keep their names", async () => {
    const projects = await otherProjects(person());
    expect(projects.project).toBe("app");
    expect(projects.others.map((other) => other.project)).toEqual(["lib"]);
    const room = await open(projects);
    expect(row(room, "dave@lib")).toMatchObject({ project: "lib", status: "ready", cli: null });
    expect(row(room, "alice")).toMatchObject({ project: "app", cli: "claude" });
    expect(room.claims().map((claim) => [claim.path, claim.holder, claim.project])).toEqual([
      ["src/a.ts", "alice", "app"],
      ["src/c.ts", "carol", "app"],
      ["lib/d.ts", "dave@lib", "lib"],
    ]);
  });
});

describe("a store that cannot be read", () => {
  test("another project's claims unreadable: the room still shows its agents, and every other claim", async () => {
    const unreadable = failing(libStore, ["fileClaims"], "permission denied");
    const room = await open({ project: "app", others: [{ project: "lib", store: unreadable }] });
    expect(row(room, "alice")).toMatchObject({ project: "app", cli: "claude" });
    expect(row(room, "dave@lib")).toMatchObject({ project: "lib", status: "ready" });
    expect(room.claims().map((claim) => [claim.path, claim.holder])).toEqual([
      ["src/a.ts", "alice"],
      ["src/c.ts", "carol"],
    ]);
  });
});

describe("the person's presence", () => {
  test("set offline by a view that ended elsewhere while this one runs: registered again", async () => {
    const room = await open({ register: true });
    expect((await appStore.status("ana"))?.status).toBe("ready");
    await appStore.writeStatus({ name: "ana", status: "offline", pane: PERSON_PANE });
    await waitFor("the view to register the person again", async () => {
      await room.step();
      return (await appStore.status("ana"))?.status === "ready";
    });
    await leaveRoom(person(), room, "ana");
    expect((await appStore.status("ana"))?.status).toBe("offline");
  });

  test("a room that cannot be opened leaves no mark of its view: the person's last view that ends sets them offline", async () => {
    const unreachable = failing(libStore, ["feed"], "the other project's store is unreachable");
    await expect(
      openRoom(person(), "bea", { register: true, project: "app", others: [{ project: "lib", store: unreachable }] }),
    ).rejects.toThrow("the other project's store is unreachable");
    const room = await open({ register: true }, "bea");
    await leaveRoom(person(), room, "bea");
    expect((await appStore.status("bea"))?.status).toBe("offline");
  });
});
