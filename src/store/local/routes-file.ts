/**
 * The routes into agents that the mailman verified (mail/route.ts), kept beside its other files so `send` can
 * deliver at once along them: `<root>/.mailman/routes.json`, agent name -> `{route, verified_at, holds}`, replaced
 * whole by the mailman; and `<root>/.mailman/framed/<name>`, an empty file per agent whose time says when a frame
 * last went to it (by the mailman or a send), so a burst is left to the mailman, which puts it in one frame.
 */
import { closeSync, mkdirSync, openSync, readFileSync, statSync, utimesSync } from "node:fs";
import { join } from "node:path";
import type { Route } from "../../mail/route.ts";
import { encodeName } from "../../mail/names.ts";
import { replaceFile } from "../durable/files.ts";
import { MAILMAN_DIR, MAILMAN_FILES } from "./layout.ts";

export interface KnownRoute {
  route: Route;
  /** When a frame along it last arrived without a bad receipt. */
  verified_at: string;
  /** Claude Code held mail sent along it for its user's approval: `send` leaves it to the mailman. */
  holds: boolean;
}

const routesPath = (root: string) => join(root, MAILMAN_DIR, MAILMAN_FILES.routes);
const framedPath = (root: string, agent: string) => join(root, MAILMAN_DIR, MAILMAN_FILES.framed, encodeName(agent));

/** The routes by agent; none when the file is missing or unreadable (send then leaves the mail to the mailman). */
export function readRoutes(root: string): Record<string, KnownRoute> {
  try {
    const value = JSON.parse(readFileSync(routesPath(root), "utf8"));
    return value !== null && typeof value === "object" ? Object.assign(Object.create(null), value) : Object.create(null);
  } catch {
    return Object.create(null);
  }
}

export function writeRoutes(root: string, routes: Record<string, KnownRoute>): void {
  const text = `${JSON.stringify(routes)}\n`;
  try {
    if (readFileSync(routesPath(root), "utf8") === text) return;
  } catch {
    // Not written yet.
  }
  replaceFile(routesPath(root), text);
}

/** Notes that a frame went to `agent` now. */
export function noteFramed(root: string, agent: string): void {
  const path = framedPath(root, agent);
  try {
    mkdirSync(join(root, MAILMAN_DIR, MAILMAN_FILES.framed), { recursive: true, mode: 0o700 });
    closeSync(openSync(path, "a", 0o600));
    const now = new Date();
    utimesSync(path, now, now);
  } catch {
    // Only pacing is lost: the next frame may follow sooner.
  }
}

/** When a frame last went to `agent` (ms since the epoch), or 0. */
export function lastFramed(root: string, agent: string): number {
  try {
    return statSync(framedPath(root, agent)).mtimeMs;
  } catch {
    return 0;
  }
}
