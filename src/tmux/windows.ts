import { tmux } from "./client.ts";
import { newMarker, splitRecords } from "./caller.ts";

export interface Pane {
  paneId: string;
  windowId: string;
  windowName: string;
  /** The pane is the active one of its window: where a person (or agent) is typing. */
  active: boolean;
  /** In copy mode or another mode: typed text would be swallowed. */
  inMode: boolean;
  cursorX: number;
  cursorY: number;
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

/** Every pane of the tmux server, in one client call; null when there is no server to ask. */
export async function listAllPanes(env: Env): Promise<Pane[] | null> {
  const marker = newMarker();
  const stdout = await tryTmux(["list-panes", "-a", "-F", `${marker}#{pane_id}\t#{window_id}\t#{pane_active}\t#{pane_in_mode}\t#{cursor_x}\t#{cursor_y}\t#{window_name}`], env);
  if (stdout === null) return null;
  const records = splitRecords(stdout, marker) ?? [];
  const panes: Pane[] = [];
  for (const record of records) {
    const parts = record.split("\t");
    if (parts.length < 7) continue;
    const [paneId, windowId, active, inMode, cursorX, cursorY] = parts;
    panes.push({
      paneId: paneId!,
      windowId: windowId!,
      active: active === "1",
      inMode: inMode === "1",
      cursorX: Number(cursorX),
      cursorY: Number(cursorY),
      windowName: parts.slice(6).join("\t"),
    });
  }
  return panes;
}

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
