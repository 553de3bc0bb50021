/**
 * Where Claude Code keeps its agent teams (2.1.332):
 *
 *   <config dir>/teams/<team>/config.json              the team: its lead and members
 *   <config dir>/teams/<team>/inboxes/<member>.json    a member's inbox: a JSON array of messages
 *   <config dir>/sessions/<pid>.json                   one per running interactive session (finding a lead's team)
 *
 * The config dir is $CLAUDE_CONFIG_DIR, else ~/.claude. Member names become file names through Claude's own
 * sanitizer (anything but letters, digits, `_` and `-` becomes `-`), so a hostile name can never leave `inboxes/`, and
 * two members can share one file (`x.y` and `x-y`): the bridge refuses to make such a pair and never imports from a
 * shared file (team-config.ts sharingInbox).
 */
import { homedir } from "node:os";
import { join } from "node:path";

type Env = Record<string, string | undefined>;

export function claudeConfigDir(env: Env): string {
  return (env.CLAUDE_CONFIG_DIR || join(env.HOME || homedir(), ".claude")).normalize("NFC");
}

export const teamsDir = (configDir: string) => join(configDir, "teams");
export const sessionsDir = (configDir: string) => join(configDir, "sessions");

/** The names Claude gives teams today (`session-<8 hex>`) and any name both of its path sanitizers leave as it is. */
export const TEAM_NAME = /^[a-z0-9][a-z0-9-]{0,127}$/;

export const teamConfigFile = (teamDir: string) => join(teamDir, "config.json");
export const inboxesDir = (teamDir: string) => join(teamDir, "inboxes");

/** Claude's sanitizer for an inbox's file name. */
export const inboxFileName = (member: string) => `${member.replace(/[^a-zA-Z0-9_-]/g, "-")}.json`;

/**
 * Whether two members' inboxes are one file: Claude's sanitizer maps `x.y` and `x-y` to `x-y.json`, and on a file
 * system that ignores case (macOS's, by default) `X-Y.json` is that file too, so case is ignored here as well.
 */
export const sameInboxFile = (a: string, b: string) => inboxFileName(a).toLowerCase() === inboxFileName(b).toLowerCase();

export const inboxFile = (teamDir: string, member: string) => join(inboxesDir(teamDir), inboxFileName(member));
