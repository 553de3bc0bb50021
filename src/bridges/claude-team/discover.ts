/**
 * Finding the team of a running lead. Claude Code 2.1.332 has no TeamCreate: every interactive session with agent
 * teams on makes its own team, `session-<first 8 characters of its session id>`, about 0.7 s after it starts, and a
 * new session is a new team. A running session writes `<config dir>/sessions/<pid>.json` (removed at exit) with its
 * `sessionId`, `version` and `tmux` (`<session>:@<window>.%<pane>`, the pane it runs in); the team's config.json
 * names the same session as `leadSessionId`. So a team is found from the lead's tmux window, or as the only team
 * whose lead is running.
 */
import { readdirSync } from "node:fs";
import { join } from "node:path";
import { isAlive } from "../../store/durable/process-identity.ts";
import { Malformed } from "../formats/frontmatter.ts";
import { sessionsDir } from "./paths.ts";
import { readTeamFile } from "./read-file.ts";

export interface LeadSession {
  pid: number;
  sessionId: string;
  /** The team this session made. */
  team: string;
  /** The tmux pane the session runs in (`%3`), when it runs in tmux. */
  paneId?: string;
  version?: string;
}

const SESSION_FILE = /^\d+\.json$/;
const PANE = /\.(%\d+)$/;
const MAX_SESSION_BYTES = 64 * 1024;

export const teamOfSession = (sessionId: string) => `session-${sessionId.slice(0, 8)}`;

function sessionAt(path: string): LeadSession | null {
  let value: Record<string, unknown>;
  try {
    const text = readTeamFile(path, MAX_SESSION_BYTES);
    if (text === null) return null;
    value = JSON.parse(text);
  } catch (error) {
    if (error instanceof Malformed || error instanceof SyntaxError) return null;
    throw error;
  }
  const { pid, sessionId, tmux, version } = value ?? {};
  if (typeof pid !== "number" || typeof sessionId !== "string" || sessionId.length < 8) return null;
  const pane = typeof tmux === "string" ? PANE.exec(tmux)?.[1] : undefined;
  return {
    pid,
    sessionId,
    team: teamOfSession(sessionId),
    ...(pane === undefined ? {} : { paneId: pane }),
    ...(typeof version === "string" ? { version } : {}),
  };
}

/** The interactive sessions running now, by their session files (a file whose process is gone is passed over). */
export function runningSessions(configDir: string): LeadSession[] {
  let names: string[];
  try {
    names = readdirSync(sessionsDir(configDir));
  } catch {
    return [];
  }
  const sessions: LeadSession[] = [];
  for (const name of names.filter((candidate) => SESSION_FILE.test(candidate)).sort()) {
    const session = sessionAt(join(sessionsDir(configDir), name));
    if (session && isAlive(session.pid)) sessions.push(session);
  }
  return sessions;
}

/** The Claude Code versions the bridge was checked against. */
export const TESTED_VERSIONS = { oldest: "2.1.197", newest: "2.1.332" };

const parts = (version: string) => (/^(\d+)\.(\d+)\.(\d+)/.exec(version)?.slice(1) ?? []).map(Number);

function compare(a: number[], b: number[]): number {
  for (let i = 0; i < 3; i++) if ((a[i] ?? 0) !== (b[i] ?? 0)) return (a[i] ?? 0) - (b[i] ?? 0);
  return 0;
}

/** Whether a lead's version is one the bridge was checked against (an unknown version is not). */
export function testedVersion(version: string | undefined): boolean {
  if (version === undefined || parts(version).length !== 3) return false;
  const v = parts(version);
  return compare(v, parts(TESTED_VERSIONS.oldest)) >= 0 && compare(v, parts(TESTED_VERSIONS.newest)) <= 0;
}
