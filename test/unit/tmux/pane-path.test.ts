/**
 * Where a pane works, as the windows and panes listings give it (src/tmux/pane-path.ts), against a private tmux
 * server: a window listed the moment it opens (tmux's `#{pane_current_path}` is then "" or the server's own
 * directory), a pane whose first process is held as the server's fork for a while (as a loaded machine holds one),
 * and a pane tmux can give no path for at all.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdirSync, mkdtempSync, readFileSync, readlinkSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { resolveCaller } from "../../../src/tmux/caller.ts";
import { listAllPanes } from "../../../src/tmux/windows.ts";
import { lostItsTerminal, NO_PATH_COMMAND } from "../../support/projects.ts";
import { TmuxServer } from "../../support/tmux-server.ts";
import { waitFor } from "../../support/workflow.ts";

let root: string;
let dir: string;
let server: TmuxServer;
let serverDir: string;
let serverName: string;

beforeAll(() => {
  root = realpathSync(mkdtempSync(join(tmpdir(), "agentmail-pane-path-")));
  dir = join(root, "work");
  mkdirSync(dir);
  server = TmuxServer.start(["caller"], root);
  const pid = server.run(["display-message", "-p", "#{pid}"]).trim();
  serverDir = readlinkSync(`/proc/${pid}/cwd`);
  serverName = readFileSync(`/proc/${pid}/comm`, "utf8").trim();
  // The test needs the server's directory to be another than the windows' own.
  expect(serverDir).not.toBe(dir);
});

afterAll(() => {
  server?.stop();
  if (root) rmSync(root, { recursive: true, force: true });
});

const env = () => server.agent("caller").env;
/** A window opened with `args` as its command (run without a shell: its first process is that command), in `cwd`. */
const open = (cwd: string, args: string[]) =>
  server
    .run(["new-window", "-d", "-P", "-F", "#{window_id} #{pane_id} #{pane_pid}", "-c", cwd, ...args])
    .trim()
    .split(" ") as [string, string, string];

describe("a window listed as it opens says where it works", () => {
  test("60 windows, each listed the moment it opens (panes and the caller's windows): never \"\", never the server's directory", async () => {
    const seen: string[] = [];
    for (let round = 0; round < 30; round++) {
      for (const listing of ["panes", "windows"] as const) {
        const [windowId, paneId] = open(dir, ["bash", "--norc", "--noprofile", "-i"]);
        const path =
          listing === "panes"
            ? (await listAllPanes(env()))!.find((pane) => pane.paneId === paneId)!.path
            : (await resolveCaller({ ...env() })).serverWindows.find((window) => window.id === windowId)!.path;
        seen.push(path);
        server.run(["kill-window", "-t", windowId]);
      }
    }
    expect(seen.filter((path) => path !== dir)).toEqual([]);
  });

  test("a first process held as the server's fork, in the server's directory, is waited for; then it works where it went", async () => {
    // A stand-in for a fork a loaded machine holds before its exec: the server's name and directory until released.
    const release = join(root, "release");
    const script = `cd "$2"; printf '%s' "$1" > /proc/$$/comm; while [ ! -e "$3" ]; do sleep 0.01; done; cd "$4"; exec bash --norc --noprofile -i`;
    const [windowId, paneId, panePid] = open(dir, [
      "bash",
      "--norc",
      "--noprofile",
      "-c",
      script,
      "held",
      serverName,
      serverDir,
      release,
      dir,
    ]);
    try {
      await waitFor("the pane to pass for the server's fork", () => readFileSync(`/proc/${panePid}/comm`, "utf8").trim() === serverName);
      // tmux's own answer is then the server's directory, or "" while the fork has not taken the terminal: both wrong.
      expect(["", serverDir]).toContain(server.run(["display-message", "-p", "-t", paneId, "#{pane_current_path}"]).trim());
      const listing = listAllPanes(env());
      // Released while the listing looks (a waiting listing polls /proc; one that does not has long returned).
      setTimeout(() => writeFileSync(release, ""), 200);
      expect((await listing)!.find((pane) => pane.paneId === paneId)!.path).toBe(dir);
    } finally {
      server.run(["kill-window", "-t", windowId]);
      rmSync(release, { force: true });
    }
  });

  test("a pane tmux gives no path for (its process let go of the terminal) works where that process works", async () => {
    const [windowId, paneId, panePid] = open(dir, NO_PATH_COMMAND);
    try {
      await waitFor("the pane's process to let go of its terminal", () => lostItsTerminal(panePid));
      expect(server.run(["display-message", "-p", "-t", paneId, "[#{pane_current_path}]"]).trim()).toBe("[]");
      expect((await listAllPanes(env()))!.find((pane) => pane.paneId === paneId)!.path).toBe(dir);
    } finally {
      server.run(["kill-window", "-t", windowId]);
    }
  });
});
