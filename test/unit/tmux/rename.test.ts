/**
 * What `agentmail name` asks of tmux, in process (coverage counts it), against private tmux servers: a name that
 * looks like another agent's is given with a warning; a window that is gone cannot be named, and the error says what
 * to check; a refused name gives the window back its old name; whether a pane registered from another tmux server is
 * still alive there.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { join } from "node:path";
import { paneAliveOn } from "../../../src/tmux/other-server.ts";
import { pinWindowName, restoreWindowName } from "../../../src/tmux/rename.ts";
import { runInProcess } from "../../support/in-process.ts";
import { tempRepo } from "../../support/repo.ts";
import { TmuxServer } from "../../support/tmux-server.ts";

let repo: ReturnType<typeof tempRepo>;
let server: TmuxServer;
let other: TmuxServer;

beforeAll(() => {
  repo = tempRepo();
  server = TmuxServer.start(["alice", "bob"], repo.dir);
  other = TmuxServer.start(["carol"], repo.dir);
});
afterAll(() => {
  server.stop();
  other.stop();
  repo.remove();
});

const windowName = (tmux: TmuxServer, windowId: string) =>
  tmux.run(["display-message", "-p", "-t", windowId, "#{window_name}"]).replace(/\n$/, "");
/** `$TMUX` without its session part, as the registry records a server. */
const serverOf = (tmux: TmuxServer) =>
  tmux
    .agent([...tmux.agents.keys()][0]!)
    .env.TMUX!.split(",")
    .slice(0, 2)
    .join(",");

describe("agentmail name", () => {
  test("a name that looks like another agent's is given, with a warning that says how to avoid mixed-up mail", async () => {
    const window = server.addUnnamedWindow(repo.dir);
    const place = { env: { TMUX: server.agent("alice").env.TMUX!, TMUX_PANE: window.paneId }, cwd: repo.dir };
    const lookalike = "b\u043eb"; // a Cyrillic о
    const named = await runInProcess(["name", lookalike], place);
    expect(named.code).toBe(0);
    expect(named.stdout).toBe(`${lookalike}\n`);
    expect(named.stderr).toBe(
      `warning: "${lookalike}" looks like "bob", another agent's name: mail meant for one may reach the other; ` +
        "to avoid that, pick a name that differs in plain letters: agentmail name <other-name>\n",
    );
    const json = await runInProcess(["name", lookalike, "--json"], place);
    expect(JSON.parse(json.stdout)).toEqual({
      name: lookalike,
      pane: window.paneId,
      warnings: [expect.stringContaining('looks like "bob"')],
    });
    server.run(["kill-window", "-t", window.windowId]);
  });
});

describe("naming a window in tmux", () => {
  const env = () => server.agent("alice").env;

  test("a window that is gone cannot be named: the error says to check it still exists", async () => {
    const window = server.addUnnamedWindow(repo.dir);
    server.run(["kill-window", "-t", window.windowId]);
    await expect(pinWindowName(window.windowId, "gone", env())).rejects.toThrow(
      new RegExp(`^tmux could not rename your window ${window.windowId} \\(.+\\); check that it still exists, then retry$`),
    );
  });

  test("a refused name gives the window back its old name, and tmux's renaming when it had it", async () => {
    const window = server.addUnnamedWindow(repo.dir);
    const automatic = () => server.run(["show-options", "-w", "-v", "-t", window.windowId, "automatic-rename"]).trim();
    expect(await pinWindowName(window.windowId, "for a moment", env())).toBe("for a moment");
    expect(automatic()).toBe("off");
    await restoreWindowName(window.windowId, "before", true, env());
    expect(windowName(server, window.windowId)).toBe("before");
    expect(automatic()).toBe("on");
    await pinWindowName(window.windowId, "pinned", env());
    await restoreWindowName(window.windowId, "kept; #(literally)", false, env());
    expect(windowName(server, window.windowId)).toBe("kept; #(literally)");
    expect(automatic()).toBe("off");
    server.run(["kill-window", "-t", window.windowId]);
    // Best effort: a window gone meanwhile is no error of its own.
    await restoreWindowName(window.windowId, "before", true, env());
  });
});

describe("a pane registered from another tmux server", () => {
  const env = () => server.agent("alice").env;

  test("is alive while that server runs it; not once the pane is gone, or the server is another, or nobody answers", async () => {
    const carol = other.agent("carol").paneId;
    expect(await paneAliveOn(serverOf(other), carol, env())).toBe(true);
    expect(await paneAliveOn(serverOf(server), server.agent("bob").paneId, env())).toBe(true);
    // The same socket with another pid: a server restarted there, whose pane ids start again.
    const [socket, pid] = serverOf(other).split(",") as [string, string];
    expect(await paneAliveOn(`${socket},${Number(pid) + 1}`, carol, env())).toBe(false);
    expect(await paneAliveOn(serverOf(other), "%999", env())).toBe(false);
    expect(await paneAliveOn(`${join(repo.dir, "no-such-socket")},${pid}`, carol, env())).toBe(false);
    // From the store, hostile input: checked for form before tmux sees it.
    for (const [badServer, badPane] of [
      [`${socket},x`, carol],
      [`,${pid}`, carol],
      [serverOf(other), "1"],
      [serverOf(other), "%1;kill-server"],
      [serverOf(other), "%"],
    ] as const)
      expect(await paneAliveOn(badServer, badPane, env())).toBe(false);
    expect(other.run(["display-message", "-p", "#{pid}"]).trim()).toBe(pid);
  });

  test("when tmux cannot be asked, the pane counts as alive: its agent keeps its name and mail", async () => {
    const noTmux = { ...env(), PATH: join(repo.dir, "no-bin") };
    expect(await paneAliveOn(serverOf(other), other.agent("carol").paneId, noTmux)).toBe(true);
  });
});
