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

/** Every pane of the tmux server, in one client call; null when there is no server to ask. */
export async function listAllPanes(env: Env): Promise<Pane[] | null> {
  const marker = newMarker();
  const result = await tmux(["list-panes", "-a", "-F", `${marker}#{pane_id}\t#{window_id}\t#{pane_active}\t#{pane_in_mode}\t#{cursor_x}\t#{cursor_y}\t#{window_name}`], env).catch(() => null);
  if (!result || result.code !== 0) return null;
  const records = splitRecords(result.stdout, marker) ?? [];
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
  const result = await tmux(["capture-pane", "-p", "-t", pane.paneId, "-S", String(pane.cursorY), "-E", String(pane.cursorY)], env).catch(() => null);
  if (!result || result.code !== 0) return null;
  return Array.from(result.stdout.replace(/\n$/, "")).slice(0, pane.cursorX).join("");
}

/**
 * Types a fixed text into a pane, addressed by id (never by window name: `2`, `-x` or `a.b` would hit another
 * window), in literal mode so no key names are interpreted, then presses Enter as a separate key.
 */
export async function typeLine(paneId: string, text: string, env: Env): Promise<boolean> {
  const typed = await tmux(["send-keys", "-t", paneId, "-l", "--", text], env).catch(() => null);
  if (!typed || typed.code !== 0) return false;
  const entered = await tmux(["send-keys", "-t", paneId, "Enter"], env).catch(() => null);
  return entered?.code === 0;
}
