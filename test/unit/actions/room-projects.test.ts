/**
 * Which projects the mail room of every project lists (src/actions/room.ts, otherProjects), and the room where no
 * mailman can be, in process: a private tmux server whose windows work in four repositories (the person's own, two
 * others, and one whose mail store cannot be opened), and a private redis-server whose store the person reads from
 * outside any repository, as a user the server lets list namespaces and as one it does not. The other projects come
 * sorted by name; one whose store cannot be opened, or a namespace the server will not list, is left out and the
 * room still opens; outside a repository no mailman runs, and every agent pulls its mail.
 */
import { RedisClient } from "bun";
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { openRoom, otherProjects } from "../../../src/actions/room.ts";
import type { Room } from "../../../src/room/room.ts";
import { closeStores } from "../../../src/store/kept-stores.ts";
import { runInProcess } from "../../support/in-process.ts";
import { repository } from "../../support/projects.ts";
import { RedisServer } from "../../support/redis-server.ts";
import { outsideTmuxEnv, TmuxServer } from "../../support/tmux-server.ts";
import { storeAt } from "../store/redis/helpers.ts";

let root: string;
const names = (room: Room) => room.agents().map((agent) => agent.name);

describe("the room of every project, on the file stores of their repositories", () => {
  let app: string;
  let server: TmuxServer;

  beforeAll(async () => {
    root = realpathSync(mkdtempSync(join(tmpdir(), "agentmail-room-projects-")));
    app = repository(root, "app");
    const zeta = repository(root, "zeta");
    const beta = repository(root, "beta");
    const broken = repository(root, "broken");
    // Its mail store is a file, not a directory: agentmail refuses to open it.
    writeFileSync(join(broken, ".git", "mail"), "not a mail store\n");
    // zeta's window comes first on the server, then beta's: the room's order is by name, not the server's.
    server = TmuxServer.start(["alice"], app);
    server.addWindow("zed", zeta);
    server.addWindow("bea", beta);
    server.addWindow("bo", broken);
    for (const [name, cwd] of [
      ["alice", app],
      ["zed", zeta],
      ["bea", beta],
    ] as const) {
      const registered = await runInProcess(["status", "ready"], { env: { ...server.agent(name).env, HOME: root }, cwd });
      expect({ name, code: registered.code, stderr: registered.stderr }).toEqual({ name, code: 0, stderr: "" });
    }
  });
  afterAll(() => {
    server?.stop();
    rmSync(root, { recursive: true, force: true });
  });

  /** The person, running `web` or `watch` from a terminal outside tmux in the app repository. */
  const person = () => ({ cwd: app, env: outsideTmuxEnv({ HOME: root, XDG_RUNTIME_DIR: root }) });

  test("the other projects sorted by name; one whose store cannot be opened is left out, and the room opens without it", async () => {
    const projects = await otherProjects(person());
    expect(projects.project).toBe("app");
    expect(projects.others.map((other) => other.project)).toEqual(["beta", "zeta"]);
    const room = await openRoom(person(), null, projects);
    try {
      expect(names(room).sort()).toEqual(["alice", "bea@beta", "zed@zeta"]);
    } finally {
      room.close();
    }
  });
});

describe("a room on a Redis store, outside every repository", () => {
  let redis: RedisServer;
  let outside: string;
  /** A user the server does not let run SCAN, which lists the namespaces (a locked-down managed Redis). */
  let noScanUrl: string;

  beforeAll(async () => {
    redis = await RedisServer.start();
    outside = realpathSync(mkdtempSync(join(tmpdir(), "agentmail-room-outside-")));
    mkdirSync(join(outside, "home"));
    const admin = new RedisClient(redis.url);
    try {
      expect(await admin.send("ACL", ["SETUSER", "viewer", "on", ">viewer-secret", "~*", "&*", "+@all", "-scan"])).toBe("OK");
    } finally {
      admin.close();
    }
    noScanUrl = `redis+unix://viewer:viewer-secret@localhost${redis.socket}`;
    for (const [namespace, agent] of [
      ["solo", "alice"],
      ["other", "olga"],
    ] as const) {
      const store = storeAt(redis.url, namespace);
      try {
        await store.writeStatus({ name: agent, status: "ready", pane: "%1" });
      } finally {
        store.close();
      }
    }
  });
  afterAll(async () => {
    await closeStores();
    await redis?.remove();
    if (outside) rmSync(outside, { recursive: true, force: true });
  });

  /** The person in a directory of no repository, reading namespace `solo` of the server at `url`. */
  const person = (url: string) => ({
    cwd: outside,
    env: outsideTmuxEnv({ HOME: join(outside, "home"), XDG_RUNTIME_DIR: outside, AGENTMAIL_URL: url, AGENTMAIL_NAMESPACE: "solo" }),
  });

  test("no mailman can run here: the room opens without one, and every agent pulls its mail; other namespaces are projects", async () => {
    const projects = await otherProjects(person(redis.url));
    expect({ project: projects.project, others: projects.others.map((other) => other.project) }).toEqual({
      project: null,
      others: ["other"],
    });
    const room = await openRoom(person(redis.url), null, projects);
    try {
      expect(room.mailman()).toBeNull();
      expect(room.agents().map((agent) => [agent.name, agent.reach])).toEqual([
        ["alice", "pull"],
        ["olga@other", "pull"],
      ]);
    } finally {
      room.close();
    }
  });

  test("a server that will not list its namespaces: only they are left out; the room of every project still opens", async () => {
    const projects = await otherProjects(person(noScanUrl));
    expect(projects.others).toEqual([]);
    const room = await openRoom(person(noScanUrl), null, projects);
    try {
      expect(names(room)).toEqual(["alice"]);
    } finally {
      room.close();
    }
  });
});
