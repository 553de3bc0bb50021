/**
 * A team's `config.json` (Claude Code 2.1.332): the team's name, its lead (`leadAgentId`, the member named
 * `team-lead`), the lead's session and process, and its members, each with `agentId` = `<name>@<team>` and `name`,
 * plus fields Claude keeps for its own (agentType, tmuxPaneId, cwd, backendType, color, …).
 *
 * Before the bridge reads or writes anything of a team it checks this file holds what agentmail relies on; when it
 * does not, Claude Code changed its format and the bridge stops for that team, with the file and the rule named.
 * Claude updates the file in place under `config.json.lock` and reads it without the lock, so a read may catch it
 * half-written: a parse error is read again a few times before it counts. agentmail changes it (join, leave) under
 * the same lock, replacing it whole, and keeps every field it does not know.
 */
import { AgentmailError } from "../../mail/errors.ts";
import { displayName } from "../../mail/names.ts";
import { Malformed } from "../formats/frontmatter.ts";
import { FORMAT_STOP } from "./inbox.ts";
import { makeDurable, replaceTeamFile, withTeamLock } from "./lock.ts";
import { inboxFileName, sameInboxFile, teamConfigFile } from "./paths.ts";
import { readTeamFile } from "./read-file.ts";

export interface TeamMember {
  agentId: string;
  name: string;
  agentType?: string;
  joinedAt?: number;
  tmuxPaneId?: string;
  cwd?: string;
  subscriptions?: unknown[];
  backendType?: string;
  [other: string]: unknown;
}

export interface TeamConfig {
  name: string;
  leadAgentId: string;
  leadSessionId?: string;
  leadProcess?: { pid?: number; [other: string]: unknown };
  members: TeamMember[];
  [other: string]: unknown;
}

/** The lead's name in every team. */
export const LEAD = "team-lead";

/** How agentmail marks the members it adds: Claude runs no pane logic for a backend it does not know. */
export const AGENTMAIL_BACKEND = "agentmail";

/** Backends of Claude's own teammates, which read their inboxes themselves. */
const CLAUDE_BACKENDS = new Set(["in-process", "tmux", "iterm2"]);

const MAX_CONFIG_BYTES = 4 * 1024 * 1024;
const PARSE_RETRIES_MS = [10, 20, 40];

/** Why `value` is not a team config agentmail understands for `team`, or null. */
export function configProblem(value: unknown, team: string): string | null {
  if (typeof value !== "object" || value === null || Array.isArray(value)) return "it is not a JSON object";
  const config = value as Record<string, unknown>;
  if (typeof config.name !== "string") return "it has no string 'name'";
  if (config.name !== team) return `it names the team '${displayName(config.name)}', not '${displayName(team)}'`;
  if (typeof config.leadAgentId !== "string") return "it has no string 'leadAgentId'";
  if (!Array.isArray(config.members)) return "it has no 'members' list";
  for (const [index, item] of config.members.entries()) {
    if (typeof item !== "object" || item === null || Array.isArray(item)) return `members[${index}] is not an object`;
    const { agentId, name } = item as Record<string, unknown>;
    if (typeof agentId !== "string" || typeof name !== "string") return `members[${index}] has no string 'agentId' and 'name'`;
    if (agentId !== `${name}@${team}`) return `members[${index}].agentId is '${displayName(agentId)}', not '<name>@${displayName(team)}'`;
  }
  const lead = (config.members as TeamMember[]).find((member) => member.agentId === config.leadAgentId);
  if (!lead) return "no member is the lead its 'leadAgentId' names";
  if (lead.name !== LEAD) return `the lead is named '${displayName(lead.name)}', not '${LEAD}'`;
  return null;
}

/** `changed`: config.json is not what agentmail knows; `problem` says how (the file is config.json). */
export type TeamRead = { state: "absent" } | { state: "changed"; problem: string } | { state: "read"; config: TeamConfig };

const sleep = (ms: number) => new Promise((done) => setTimeout(done, ms));

function parse(file: string, team: string): TeamRead | "torn" {
  let text: string | null;
  try {
    text = readTeamFile(file, MAX_CONFIG_BYTES);
  } catch (error) {
    if (error instanceof Malformed) return { state: "changed", problem: error.message };
    throw error;
  }
  if (text === null) return { state: "absent" };
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return "torn";
  }
  const problem = configProblem(value, team);
  return problem === null ? { state: "read", config: value as TeamConfig } : { state: "changed", problem };
}

/** The team's config as it is now; a file that stays unparseable over a few reads counts as a changed format. */
export async function readTeam(teamDir: string, team: string): Promise<TeamRead> {
  const file = teamConfigFile(teamDir);
  for (const delay of [...PARSE_RETRIES_MS, null]) {
    const read = parse(file, team);
    if (read !== "torn") return read;
    if (delay === null) break;
    await sleep(delay);
  }
  return { state: "changed", problem: "it is not JSON" };
}

/** The team's config, or an error saying why the bridge cannot use the team now. */
export async function requireTeam(teamDir: string, team: string): Promise<TeamConfig> {
  const read = await readTeam(teamDir, team);
  if (read.state === "read") return read.config;
  if (read.state === "absent") throw teamGone(teamDir, team);
  throw new AgentmailError("conflict", `${teamConfigFile(teamDir)}: ${read.problem}. ${FORMAT_STOP}`);
}

export function teamGone(teamDir: string, team: string): AgentmailError {
  return new AgentmailError(
    "not_found",
    `team ${displayName(team)} is gone (no ${teamConfigFile(teamDir)}): its lead exited, which deletes the team; ` +
      `remove the bridge (agentmail bridge remove ${displayName(team)}) and add the new session's team`,
  );
}

/** Whether Claude itself reads this member's inbox: the lead and Claude's own teammates. */
export function readByClaude(config: TeamConfig, member: TeamMember): boolean {
  return member.agentId === config.leadAgentId || (typeof member.backendType === "string" && CLAUDE_BACKENDS.has(member.backendType));
}

/** The other members whose inbox is `name`'s file too (paths.ts sameInboxFile): a file two members share is nobody's. */
export function sharingInbox(config: TeamConfig, name: string): TeamMember[] {
  return config.members.filter((member) => member.name !== name && sameInboxFile(member.name, name));
}

/** Why member `name` cannot have an inbox of its own in this team, or null: another member's is the same file. */
export function sharedInboxProblem(config: TeamConfig, name: string): string | null {
  const others = sharingInbox(config, name);
  if (others.length === 0) return null;
  const whose = others.map((member) => `'${displayName(member.name)}'${readByClaude(config, member) ? " (one of Claude Code's)" : ""}`);
  return (
    `its inbox, inboxes/${inboxFileName(name)}, is member ${whose.join(" and ")}'s too (Claude Code names an inbox file ` +
    "after the member, with every character but letters, digits, '_' and '-' made '-', and a file system may ignore case)"
  );
}

/** Changes config.json under Claude's lock; `change` returns false to leave it as it is. */
export async function updateTeam(teamDir: string, team: string, change: (config: TeamConfig) => boolean): Promise<boolean> {
  const file = teamConfigFile(teamDir);
  const changed = await withTeamLock(file, () => {
    const read = parse(file, team);
    if (read === "torn") throw new AgentmailError("conflict", `${file}: it is not JSON. ${FORMAT_STOP}`);
    if (read.state === "absent") throw teamGone(teamDir, team);
    if (read.state === "changed") throw new AgentmailError("conflict", `${file}: ${read.problem}. ${FORMAT_STOP}`);
    if (!change(read.config)) return false;
    replaceTeamFile(file, JSON.stringify(read.config, null, 2));
    return true;
  });
  if (changed) makeDurable(file);
  return changed;
}

/** Claude's rule for a teammate's name, and the names it keeps for itself. */
const MEMBER_NAME = /^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$/;
const RESERVED = new Set([LEAD, "user", "system", "main"]);
const SESSION_ID = /^[0-9a-f]{8}(-[0-9a-f]{4}){3}-[0-9a-f]{12}$/i;

export function memberNameProblem(name: string): string | null {
  if (!MEMBER_NAME.test(name)) return "a team member's name is a letter or digit, then up to 63 letters, digits, '_' or '-'";
  if (RESERVED.has(name.toLowerCase()) || SESSION_ID.test(name)) return `Claude Code keeps the name '${name}' for itself`;
  return null;
}

export interface Joining {
  name: string;
  agentType: string;
  tmuxPaneId?: string;
  cwd: string;
}

/** Adds an outside member; "already" when a member of that name is agentmail's already. */
export async function joinTeam(teamDir: string, team: string, joining: Joining): Promise<"joined" | "already"> {
  let already = false;
  await updateTeam(teamDir, team, (config) => {
    const same = config.members.find((member) => member.name === joining.name);
    if (same) {
      if (same.backendType !== AGENTMAIL_BACKEND) {
        throw new AgentmailError(
          "name_taken",
          `team ${displayName(team)} already has a member named '${displayName(joining.name)}' (one of Claude Code's); join with another --as NAME`,
        );
      }
      already = true;
      return false;
    }
    const shared = sharedInboxProblem(config, joining.name);
    if (shared !== null) {
      throw new AgentmailError(
        "name_taken",
        `cannot join ${displayName(team)} as '${displayName(joining.name)}': ${shared}; join with another --as NAME`,
      );
    }
    config.members.push({
      agentId: `${joining.name}@${config.name}`,
      name: joining.name,
      agentType: joining.agentType,
      joinedAt: Date.now(),
      ...(joining.tmuxPaneId === undefined ? {} : { tmuxPaneId: joining.tmuxPaneId }),
      cwd: joining.cwd,
      subscriptions: [],
      backendType: AGENTMAIL_BACKEND,
    });
    return true;
  });
  return already ? "already" : "joined";
}

/** Removes a member agentmail added; "absent" when there is none of that name. Claude's own members are refused. */
export async function leaveTeam(teamDir: string, team: string, name: string): Promise<"left" | "absent"> {
  let found = false;
  await updateTeam(teamDir, team, (config) => {
    const member = config.members.find((candidate) => candidate.name === name);
    if (!member) return false;
    if (member.backendType !== AGENTMAIL_BACKEND) {
      throw new AgentmailError(
        "conflict",
        `'${displayName(name)}' is one of Claude Code's own members of ${displayName(team)}, not agentmail's; it stays`,
      );
    }
    found = true;
    config.members = config.members.filter((candidate) => candidate !== member);
    return true;
  });
  return found ? "left" : "absent";
}
