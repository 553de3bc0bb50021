/**
 * The person seen from tmux (src/identity/person.ts), in process against a private tmux server: the servers the room
 * looks at, and this project's windows on them as the person's to write to, other projects' sorted out.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { personView, roomSockets } from "../../../src/identity/person.ts";
import { HOSTNAME } from "../../../src/store/durable/process-identity.ts";
import type { AgentEntry } from "../../../src/store/store.ts";
import { defaultSocket, socketOf, windowsOn } from "../../../src/tmux/servers.ts";
import { findRepository } from "../../../src/store/paths.ts";
import { tempRepo } from "../../support/repo.ts";
import { outsideTmuxEnv, TmuxServer } from "../../support/tmux-server.ts";

const entry = (name: string, extra: Partial<AgentEntry>): AgentEntry => ({
  name,
  status: "ready",
  since: "",
  updated_at: "",
  pane: "%0",
  ...extra,
});

describe("the servers the room looks at", () => {
  test("the view's own, each one an agent registered from on this machine, then the default; each once", () => {
    const env = { TMUX: "/run/own/sock,12,$0", TMUX_TMPDIR: "/run/tmp/" };
    const sockets = roomSockets(env, [
      entry("alice", { tmux_server: "/run/a/sock,34", tmux_host: HOSTNAME }),
      entry("bob", { tmux_server: "/run/a/sock,34", tmux_host: HOSTNAME, claim_server: "/run/b/sock,56", claim_host: HOSTNAME }),
      entry("carol", { tmux_server: "/run/far/sock,78", tmux_host: "another-host" }),
      entry("dave", { server: "/run/pinned/sock,9", host: HOSTNAME }),
      entry("eve", { tmux_server: "not-a-path,1", tmux_host: HOSTNAME }),
    ]);
    const uid = process.getuid!();
    expect(sockets).toEqual(["/run/own/sock", "/run/a/sock", "/run/b/sock", "/run/pinned/sock", `/run/tmp/tmux-${uid}/default`]);
    expect(defaultSocket({})).toBe(`/tmp/tmux-${uid}/default`);
    expect(socketOf("/x/sock,1")).toBe("/x/sock");
    expect(socketOf("relative,1")).toBeNull();
  });
});

describe("the person's windows", () => {
  let tmux: TmuxServer;
  let here: ReturnType<typeof tempRepo>;
  let there: ReturnType<typeof tempRepo>;
  beforeAll(() => {
    here = tempRepo();
    there = tempRepo();
    tmux = TmuxServer.start(["alice", "bob"], here.dir);
    tmux.addWindow("alice", there.dir);
  });
  afterAll(() => {
    tmux.stop();
    here.remove();
    there.remove();
  });

  test("outside tmux: this project's windows of a server an agent registered from are theirs; another project's alice is that project's", async () => {
    const statuses = [entry("alice", { tmux_server: `${tmux.socket},1`, tmux_host: HOSTNAME })];
    const view = await personView({ cwd: here.dir, env: outsideTmuxEnv() }, findRepository(here.dir, {}), statuses);
    expect(view.sockets).toContain(tmux.socket);
    expect(view.caller.windows.map((window) => window.name)).toEqual(["alice", "bob"]);
    expect(view.caller.serverWindows.map((window) => window.name)).toEqual(["alice", "bob"]);
    // (The machine's default server may hold other projects' windows too: those are not this test's.)
    const thereKey = findRepository(there.dir, {})!.commonDir;
    expect(view.projects.elsewhere.filter((window) => window.project.key === thereKey).map((window) => window.name)).toEqual(["alice"]);
    // Every server numbers its windows from @0: those of a server not the view's own are told apart by the server.
    expect(view.caller.windows.every((window) => /^\d+:@\d+$/.test(window.id))).toBe(true);
    expect(await windowsOn("/nonexistent/socket", outsideTmuxEnv())).toBeNull();
  });
});
