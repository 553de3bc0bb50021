/**
 * Where a pane works, when tmux's answer may be from before the pane was ready. tmux reads `#{pane_current_path}`
 * from /proc: the cwd of the terminal's foreground process group. A window that is opening has as its first process
 * the tmux server's own fork until that fork execs the window's command: before it takes the terminal, tmux finds
 * no foreground group and says ""; before it changes into the window's start directory (`-c`), its cwd is the
 * server's. Measured on tmux 3.3a: a `list-panes` right after `new-window` said "" for 13 of 200 panes, and /proc
 * showed the first process still the server's fork in 23 of 300, 12 of them still in the server's directory. Read
 * so, a window of another project that has just opened would count as this project's (identity/projects.ts), and
 * mail for its name would go to the wrong store.
 *
 * So a path that is "" or the server's own directory is checked: while the pane's first process is the server's
 * fork (its name is still the server's), it is waited for, briefly; then the path is read again as tmux reads it.
 * Off Linux, or when /proc cannot be read, tmux's answer stands.
 */
import { readFileSync, readlinkSync } from "node:fs";

/** A pane as tmux described it: its first process (`#{pane_pid}`), and its path, settled in place. */
export interface PanePath {
  panePid: number;
  path: string;
}

/** How long an opening window is waited for: its first process execs within milliseconds, a loaded machine aside. */
const OPENING_MS = 2_000;
const STEP_MS = 2;

const link = (path: string): string | null => {
  try {
    return readlinkSync(path);
  } catch {
    return null;
  }
};

/**
 * A process's name and its terminal's foreground process group (0 or less: none), from one read of its stat; the name
 * is the text between the first "(" and the last ")", which may hold spaces and parentheses.
 */
function stateOf(pid: number): { name: string; foreground: number } | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    const close = stat.lastIndexOf(")");
    return { name: stat.slice(stat.indexOf("(") + 1, close), foreground: Number(stat.slice(close + 2).split(" ")[5]) };
  } catch {
    return null;
  }
}

const sleep = (ms: number) => new Promise((done) => setTimeout(done, ms));

/**
 * Settles the paths of `panes` of the tmux server whose pid is `serverPid` (`#{pid}`): each "" or the server's own
 * directory is read again as tmux reads it (the cwd of the terminal's foreground process group, else of the pane's
 * first process) once that process is no longer the server's fork; "" when it cannot be read, or when the window is
 * still opening after OPENING_MS.
 */
export async function settlePanePaths(panes: readonly PanePath[], serverPid: number): Promise<void> {
  if (!Number.isInteger(serverPid) || serverPid <= 0) return;
  const serverDir = link(`/proc/${serverPid}/cwd`);
  if (serverDir === null) return;
  let server: ReturnType<typeof stateOf> | undefined;
  for (const pane of panes) {
    if ((pane.path !== "" && pane.path !== serverDir) || !Number.isInteger(pane.panePid) || pane.panePid <= 0) continue;
    server ??= stateOf(serverPid);
    if (server === null) return;
    let state = stateOf(pane.panePid);
    // Nothing to read (gone, or hidden): tmux's answer stands.
    if (state === null) continue;
    const opening = state.name === server.name;
    const deadline = Date.now() + OPENING_MS;
    while (state?.name === server.name && Date.now() < deadline) {
      await sleep(STEP_MS);
      state = stateOf(pane.panePid);
    }
    if (state === null || state.name === server.name) {
      pane.path = "";
      continue;
    }
    const dir = (state.foreground > 0 ? link(`/proc/${state.foreground}/cwd`) : null) ?? link(`/proc/${pane.panePid}/cwd`);
    if (dir !== null) pane.path = dir;
    else if (opening) pane.path = "";
  }
}
