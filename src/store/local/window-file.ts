/**
 * Each agent's arrival window (mail/arrival-window.ts), kept where every arrival on this host can read it: the
 * mailman's frames, `send`'s, and the agent's own hooks. `<root>/.mailman/window/<encoded name>`, one small JSON object
 * replaced whole. Best effort: a window that cannot be read is a new one, and one that cannot be written only lets
 * the next arrival show its whole budget again. Two arrivals at the same instant may both use what is left of it; the
 * claims in the delivery record still keep each message to one arrival.
 */
import { mkdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { parseWindow, type ArrivalWindow } from "../../mail/arrival-window.ts";
import { encodeName } from "../../mail/names.ts";
import { replaceFile } from "../durable/files.ts";
import { MAILMAN_DIR, MAILMAN_FILES } from "./layout.ts";

const windowDir = (root: string) => join(root, MAILMAN_DIR, MAILMAN_FILES.window);

export function readWindow(root: string, agent: string): ArrivalWindow | null {
  try {
    return parseWindow(readFileSync(join(windowDir(root), encodeName(agent)), "utf8"));
  } catch {
    return null;
  }
}

export function writeWindow(root: string, agent: string, window: ArrivalWindow | null): void {
  if (window === null) return;
  try {
    mkdirSync(windowDir(root), { recursive: true, mode: 0o700 });
    replaceFile(join(windowDir(root), encodeName(agent)), `${JSON.stringify(window)}\n`);
  } catch {
    // The next arrival counts from a new window.
  }
}
