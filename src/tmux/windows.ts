import { tmux } from "./client.ts";
import { newMarker, splitRecords } from "./caller.ts";
import { readForeground, type ForegroundView } from "./foreground.ts";
import { settlePanePaths } from "./pane-path.ts";

export interface Pane {
  paneId: string;
  windowId: string;
  windowName: string;
  /** The pane is the active one of its window: where a person (or agent) is typing. */
  active: boolean;
  /** In copy mode or another mode: typed text would be swallowed. */
  inMode: boolean;
  /** The pane's first process (`#{pane_pid}`), whose stat names its terminal's foreground process group. */
  panePid: number;
  /** The pane's terminal (`#{pane_tty}`, `/dev/pts/N`). */
  tty: string;
  cursorX: number;
  cursorY: number;
  /**
   * Where the pane works (`#{pane_current_path}`: its foreground process's cwd), which tells the project it belongs
   * to (identity/projects.ts); "" when tmux does not know.
   */
  path: string;
}

type Env = Record<string, string | undefined>;

/** A tmux call whose failure (no server, no such pane, tmux missing or hung) is an answer, not an error. */
async function tryTmux(args: string[], env: Env): Promise<string | null> {
  try {
    const result = await tmux(args, env);
    return result.code === 0 ? result.stdout : null;
  } catch {
    return null;
  }
}

const PANE_FIELDS = [
  "#{pane_id}",
  "#{window_id}",
  "#{pane_active}",
  "#{pane_in_mode}",
  "#{cursor_x}",
  "#{cursor_y}",
  "#{pane_pid}",
  "#{pane_tty}",
];

/** Tags the two kinds of record: a pane's fields with its window's name, and a pane's working directory. */
const PANE = "pane\t";
const PATH = "path\t";

/**
 * Every pane of the tmux server (the one on `socket` when given, else $TMUX's), in one client call; null when there
 * is no server to ask. The window name and the working directory are free text, each last in a record of its own
 * (tagged), and each record starts with a random marker, so neither can forge a field or a record.
 */
export async function listAllPanes(env: Env, socket?: string): Promise<Pane[] | null> {
  const marker = newMarker();
  const stdout = await tryTmux(
    [
      ...(socket ? ["-S", socket] : []),
      "list-panes",
      "-a",
      "-F",
      `${marker}${PANE}${PANE_FIELDS.join("\t")}\t#{window_name}`,
      ";",
      "list-panes",
      "-a",
      "-F",
      `${marker}${PATH}#{pane_id}\t#{pid}\t#{pane_current_path}`,
    ],
    env,
  );
  if (stdout === null) return null;
  const panes: Pane[] = [];
  const paths = new Map<string, string>();
  let serverPid = 0;
  for (const record of splitRecords(stdout, marker) ?? []) {
    if (record.startsWith(PATH)) {
      const tab = record.indexOf("\t", PATH.length);
      const second = tab === -1 ? -1 : record.indexOf("\t", tab + 1);
      if (second === -1) continue;
      paths.set(record.slice(PATH.length, tab), record.slice(second + 1));
      serverPid = Number(record.slice(tab + 1, second));
      continue;
    }
    if (!record.startsWith(PANE)) continue;
    const parts = record.slice(PANE.length).split("\t");
    if (parts.length < PANE_FIELDS.length + 1) continue;
    const [paneId, windowId, active, inMode, cursorX, cursorY, panePid, tty] = parts;
    panes.push({
      paneId: paneId!,
      windowId: windowId!,
      active: active === "1",
      inMode: inMode === "1",
      panePid: Number(panePid),
      tty: tty!,
      cursorX: Number(cursorX),
      cursorY: Number(cursorY),
      windowName: parts.slice(PANE_FIELDS.length).join("\t"),
      path: "",
    });
  }
  for (const pane of panes) pane.path = paths.get(pane.paneId) ?? "";
  // A window opening right now may not say yet where it works (tmux/pane-path.ts).
  await settlePanePaths(panes, serverPid);
  return panes;
}

/** Who holds the pane's terminal now (read afresh: it changes as programs start and end), or null when unknown. */
export const foregroundOf = (pane: Pane): ForegroundView | null => readForeground(pane.panePid, pane.tty);

/** The text on the line the pane's cursor is on, up to the cursor. */
export async function textBeforeCursor(pane: Pane, env: Env): Promise<string | null> {
  const line = await tryTmux(["capture-pane", "-p", "-t", pane.paneId, "-S", String(pane.cursorY), "-E", String(pane.cursorY)], env);
  if (line === null) return null;
  return Array.from(line.replace(/\n$/, "")).slice(0, pane.cursorX).join("");
}

/**
 * Types a fixed text into a pane, addressed by id (never by window name: `2`, `-x` or `a.b` would hit another
 * window), in literal mode so no key names are interpreted, then presses Enter as a separate key.
 */
export async function typeLine(paneId: string, text: string, env: Env): Promise<boolean> {
  if ((await tryTmux(["send-keys", "-t", paneId, "-l", "--", text], env)) === null) return false;
  return (await tryTmux(["send-keys", "-t", paneId, "Enter"], env)) !== null;
}

/**
 * The text before the cursor on the line the cursor is on now, asked afresh (the cursor moves as a pane takes
 * input): one tmux call gives the cursor's position and the screen, read in that order by the server.
 */
export async function lineBeforeCursorNow(paneId: string, env: Env): Promise<string | null> {
  const marker = newMarker();
  const cursor = `${marker}#{cursor_x} #{cursor_y}`;
  const stdout = await tryTmux(["display-message", "-p", "-t", paneId, cursor, ";", "capture-pane", "-p", "-t", paneId], env);
  if (stdout === null || !stdout.startsWith(marker)) return null;
  const [position = "", ...screen] = stdout.slice(marker.length).split("\n");
  const [x, y] = position.split(" ").map(Number);
  if (!Number.isInteger(x) || !Number.isInteger(y)) return null;
  return Array.from(screen[y!] ?? "")
    .slice(0, x)
    .join("");
}

/** Presses Enter in a pane, addressed by id. */
export async function pressEnter(paneId: string, env: Env): Promise<boolean> {
  return (await tryTmux(["send-keys", "-t", paneId, "Enter"], env)) !== null;
}
