/**
 * Asking another tmux server whether the pane an agent registered from still lives (src/tmux/other-server.ts): the
 * answer that decides whether a name, and its mail, still belongs to an agent of another server. Against private
 * tmux servers started here: a live pane, a pane gone, the server restarted on its socket, no server, a hung one,
 * and hostile records that must never reach tmux as anything but checked words.
 */
import { afterEach, beforeEach, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { paneAliveOn } from "../../../src/tmux/other-server.ts";
import { outsideTmuxEnv, TmuxServer } from "../../support/tmux-server.ts";
import { waitFor } from "../../support/workflow.ts";

let other: TmuxServer;
let cwd: string;
/** The caller runs under no tmux server of its own: only the recorded socket is asked. */
const env = outsideTmuxEnv();
/** `$TMUX` without its session part, as the registry records a server: `<socket>,<server pid>`. */
const recorded = (server: TmuxServer) => server.agent("remote").env.TMUX!.split(",").slice(0, 2).join(",");

beforeEach(() => {
  cwd = mkdtempSync(join(tmpdir(), "agentmail-other-"));
  other = TmuxServer.start(["remote", "second"], cwd);
});
afterEach(() => {
  other.stop();
  rmSync(cwd, { recursive: true, force: true });
});

describe("is the pane alive on the other server", () => {
  test("a pane that lives there is alive; once its window is closed it is not", async () => {
    const { paneId } = other.agent("second");
    expect(await paneAliveOn(recorded(other), paneId, env)).toBe(true);
    expect(await paneAliveOn(recorded(other), other.agent("remote").paneId, env)).toBe(true);
    other.run(["kill-window", "-t", other.agent("second").windowId]);
    expect(await paneAliveOn(recorded(other), paneId, env)).toBe(false);
    expect(await paneAliveOn(recorded(other), other.agent("remote").paneId, env)).toBe(true);
  });

  test("a server restarted on the same socket is another server: its pane of the same id is not the agent's", async () => {
    const before = recorded(other);
    const { paneId } = other.agent("remote");
    other.run(["kill-server"]);
    // The old server may still be on its way out, answering "server exited unexpectedly": tried until one starts.
    await waitFor("a new server on the socket", () => {
      try {
        other.run(["new-session", "-d", "-s", "again", "bash --norc --noprofile -i"]);
        return true;
      } catch {
        return false;
      }
    });
    // The new server numbers its panes from the start again: the id is there, the pid differs.
    expect(other.run(["list-panes", "-a", "-F", "#{pane_id}"]).trim()).toBe(paneId);
    expect(await paneAliveOn(before, paneId, env)).toBe(false);
  });

  test("a socket no server answers on is no live agent", async () => {
    const server = recorded(other);
    other.run(["kill-server"]);
    expect(await paneAliveOn(server, other.agent("remote").paneId, env)).toBe(false);
    expect(await paneAliveOn(`${join(cwd, "never-a-socket")},1`, "%0", env)).toBe(false);
  });

  test("a server that does not answer in time may be alive: its agent keeps the name", async () => {
    const server = recorded(other);
    const pid = Number(server.split(",")[1]);
    // Stopped (SIGSTOP: a paused VM, a suspended job): it keeps its socket and answers nothing until continued.
    process.kill(pid, "SIGSTOP");
    try {
      // Bounded here, so that a call that never returns fails as a timeout and the server is continued.
      const answer = await Promise.race([
        paneAliveOn(server, other.agent("remote").paneId, env),
        Bun.sleep(20_000).then(() => "timed out"),
      ]);
      expect(answer).toBe(true);
    } finally {
      process.kill(pid, "SIGCONT");
    }
    expect(await paneAliveOn(server, other.agent("remote").paneId, env)).toBe(true);
  }, 30_000);

  test("a malformed record is no live agent and reaches no tmux: socket, pid and pane are checked first", async () => {
    const socket = recorded(other).split(",")[0]!;
    const pane = other.agent("remote").paneId;
    for (const [server, target] of [
      [socket, pane],
      [`,${socket}`, pane],
      [`${socket},12x`, pane],
      [`${socket},`, pane],
      [`${socket},1`, pane.slice(1)],
      [`${socket},1`, "%"],
      [`${socket},1`, `${pane};kill-server`],
      [`${socket},1`, "-t"],
    ] as const) {
      expect({ server, target, alive: await paneAliveOn(server, target, env) }).toEqual({ server, target, alive: false });
    }
    // None of them was run as a command: the server and its windows are all there.
    expect(other.run(["list-windows", "-F", "#{window_name}"]).trim().split("\n")).toEqual(["remote", "second"]);
  });
});
