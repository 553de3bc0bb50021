/**
 * Asking another tmux server by its socket (src/tmux/servers.ts), as the person's views do from outside tmux: two
 * private servers whose windows share names, each answering with its own windows and panes; a server that is gone
 * (no socket, or a socket its killed server left behind) told apart from one that cannot be asked (tmux missing, or
 * a server that does not answer), whose agents the room must not call closed; the socket a registration names, and
 * the one tmux uses when none is named. Which servers the person's views look at is test/unit/identity/person.test.ts.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync, mkdtempSync, realpathSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { tmuxServerOf } from "../../../src/identity/invocation.ts";
import { defaultSocket, panesOn, socketOf, windowsOn } from "../../../src/tmux/servers.ts";
import { tempRepo } from "../../support/repo.ts";
import { outsideTmuxEnv, TmuxServer } from "../../support/tmux-server.ts";
import { waitFor } from "../../support/wait.ts";

let app: ReturnType<typeof tempRepo>;
let lib: ReturnType<typeof tempRepo>;
let first: TmuxServer;
let second: TmuxServer;
beforeAll(() => {
  app = tempRepo();
  lib = tempRepo();
  first = TmuxServer.start(["alice", "bob"], app.dir);
  second = TmuxServer.start(["alice", "carol"], lib.dir);
});
afterAll(() => {
  first.stop();
  second.stop();
  app.remove();
  lib.remove();
});

/** No tmux on the PATH: the client cannot even be started. */
const withoutTmux = () => outsideTmuxEnv({ PATH: "/nonexistent" });

describe("another server's windows", () => {
  test("each socket answers with its own server's windows, where each works, though their names repeat", async () => {
    const windows = await windowsOn(first.socket, outsideTmuxEnv());
    expect(windows!.map((window) => [window.name, window.paneId, window.path])).toEqual([
      ["alice", first.agent("alice").paneId, app.dir],
      ["bob", first.agent("bob").paneId, app.dir],
    ]);
    const others = await windowsOn(second.socket, outsideTmuxEnv());
    expect(others!.map((window) => [window.name, window.paneId, window.path])).toEqual([
      ["alice", second.agent("alice").paneId, lib.dir],
      ["carol", second.agent("carol").paneId, lib.dir],
    ]);
  });

  test("no server there, or no tmux to ask: none (null), not an error", async () => {
    expect(await windowsOn(join(app.dir, "no-socket"), outsideTmuxEnv())).toBeNull();
    expect(await windowsOn(first.socket, withoutTmux())).toBeNull();
  });
});

describe("another server's panes", () => {
  test("each socket answers with its own server's panes: window, pane and path", async () => {
    const panes = await panesOn(second.socket, outsideTmuxEnv());
    expect(panes).not.toBe("gone");
    expect((panes as Exclude<typeof panes, "gone" | null>).map((pane) => [pane.windowName, pane.paneId, pane.path])).toEqual([
      ["alice", second.agent("alice").paneId, lib.dir],
      ["carol", second.agent("carol").paneId, lib.dir],
    ]);
  });

  test("no socket at the path: the server is gone", async () => {
    expect(await panesOn(join(app.dir, "no-socket"), outsideTmuxEnv())).toBe("gone");
  });

  test("tmux missing: whether the server runs cannot be told (null), so its agents are not called closed", async () => {
    expect(await panesOn(first.socket, withoutTmux())).toBeNull();
  });

  test("the socket a killed server left behind, nobody listening on it: gone", async () => {
    const killed = TmuxServer.start(["dave"], app.dir);
    try {
      const pid = Number(killed.run(["display-message", "-p", "#{pid}"]).trim());
      process.kill(pid, "SIGKILL");
      await waitFor("the killed tmux server to stop answering", () => {
        try {
          killed.run(["list-sessions"]);
          return false;
        } catch {
          return true;
        }
      });
      expect(await panesOn(killed.socket, outsideTmuxEnv())).toBe("gone");
    } finally {
      killed.stop();
    }
  });

  test("a server that does not answer (stopped): cannot be told (null), not gone", async () => {
    const stopped = TmuxServer.start(["erin"], app.dir);
    const pid = Number(stopped.run(["display-message", "-p", "#{pid}"]).trim());
    process.kill(pid, "SIGSTOP");
    try {
      expect(await panesOn(stopped.socket, outsideTmuxEnv())).toBeNull();
    } finally {
      process.kill(pid, "SIGCONT");
      stopped.stop();
    }
  });
});

describe("which socket", () => {
  test("the server an agent's registration records (its $TMUX without the session) names that server's socket", async () => {
    const recorded = tmuxServerOf(second.agent("carol").env)!;
    expect(socketOf(recorded)).toBe(second.socket);
    expect(((await panesOn(socketOf(recorded)!, outsideTmuxEnv())) as { windowName: string }[]).map((pane) => pane.windowName)).toEqual([
      "alice",
      "carol",
    ]);
    // No path: no socket to ask.
    expect(socketOf("default,123")).toBeNull();
  });

  test("with none named, the socket tmux itself uses: under TMUX_TMPDIR, where a server started without -S listens", async () => {
    const scratch = realpathSync(mkdtempSync(join(tmpdir(), "agentmail-tmux-tmpdir-")));
    const env = outsideTmuxEnv({ TMUX_TMPDIR: `${scratch}/` });
    const tmux = (args: string[]) => Bun.spawnSync(["tmux", "-f", "/dev/null", ...args], { env, stdin: "ignore" });
    try {
      expect(tmux(["new-session", "-d", "-s", "plain", "-n", "frank", "-c", app.dir, "bash --norc --noprofile -i"]).exitCode).toBe(0);
      const socket = defaultSocket(env);
      expect(socket).toBe(join(scratch, `tmux-${process.getuid!()}`, "default"));
      expect(existsSync(socket)).toBe(true);
      expect(((await windowsOn(socket, outsideTmuxEnv())) ?? []).map((window) => window.name)).toEqual(["frank"]);
    } finally {
      tmux(["kill-server"]);
      rmSync(scratch, { recursive: true, force: true });
    }
  });
});
