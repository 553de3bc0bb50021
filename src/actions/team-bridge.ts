/**
 * The claude-team bridge's setup: `bridge add claude-team [TEAM] [--dir DIR] [--lead WINDOW] [--member NAME=AGENT]`,
 * and `bridge join` / `bridge leave`, which add the calling agent to a team's config.json as a member its lead can
 * message, and take it out again. Loaded only by those commands.
 */
import { existsSync, realpathSync, statSync } from "node:fs";
import { homedir } from "node:os";
import { basename, join, relative, resolve } from "node:path";
import { nameProblem } from "../mail/addresses.ts";
import { AgentmailError } from "../mail/errors.ts";
import { displayName } from "../mail/names.ts";
import { updateBridges, readBridges, findBridge, type BridgeConfig } from "../bridges/config.ts";
import { runningSessions, testedVersion, TESTED_VERSIONS, type LeadSession } from "../bridges/claude-team/discover.ts";
import { claudeConfigDir, TEAM_NAME, teamsDir } from "../bridges/claude-team/paths.ts";
import {
  joinTeam,
  leaveTeam,
  memberNameProblem,
  readTeam,
  requireTeam,
  sharedInboxProblem,
  type TeamConfig,
} from "../bridges/claude-team/team-config.ts";
import { deliverable, recipientProblem } from "../bridges/deliver.ts";
import { ensureRoot, localRoot } from "../store/paths.ts";
import { listAllPanes } from "../tmux/windows.ts";
import { storeAt, whoIsCalling } from "../identity/caller.ts";
import type { Invocation } from "../identity/invocation.ts";

export interface TeamAddRequest {
  team?: string;
  dir?: string;
  /** The tmux window the lead runs in. */
  lead?: string;
  /** `NAME=AGENT`: member NAME's inbox goes to agentmail recipient AGENT. */
  members?: string[];
}

export interface TeamAdded {
  bridge: BridgeConfig;
  /** What the user should know (an untested Claude Code version, a lead found in no window). */
  warnings: string[];
}

const storeOf = (invocation: Invocation) => ensureRoot(localRoot(invocation.cwd, invocation.env));

/** How a team directory is shown: under the home directory as `~/…`. */
function labelOf(dir: string, env: Invocation["env"]): string {
  const home = env.HOME || homedir();
  const inside = relative(home, dir);
  return inside !== "" && !inside.startsWith("..") && !inside.startsWith("/") ? join("~", inside) : dir;
}

/** The panes of the window named `window` on the caller's tmux server. */
async function panesOf(invocation: Invocation, window: string): Promise<Set<string>> {
  const panes = await listAllPanes(invocation.env);
  if (panes === null)
    throw new AgentmailError(
      "not_in_tmux",
      "--lead names a tmux window, and tmux is not answering here; run this in the lead's tmux server, or give the team's name",
    );
  const ids = new Set(panes.filter((pane) => pane.windowName === window).map((pane) => pane.paneId));
  if (ids.size === 0) {
    throw new AgentmailError("not_found", `no tmux window is named '${displayName(window)}'; give --lead the window Claude Code runs in`);
  }
  return ids;
}

/** The window a pane is in, on the caller's tmux server, when there is one to ask. */
async function windowOfPane(invocation: Invocation, paneId: string | undefined): Promise<string | undefined> {
  if (paneId === undefined || !invocation.env.TMUX) return undefined;
  return (await listAllPanes(invocation.env))?.find((pane) => pane.paneId === paneId)?.windowName;
}

const listed = (sessions: LeadSession[]) => sessions.map((session) => `${session.team} (pid ${session.pid})`).join(", ");

/** The team to bridge: named, the one whose lead runs in --lead's window, or the only one with a running lead. */
async function findTeam(
  invocation: Invocation,
  request: TeamAddRequest,
  configDir: string,
): Promise<{ team: string; session?: LeadSession }> {
  const running = runningSessions(configDir);
  if (request.team !== undefined) return { team: request.team, session: running.find((session) => session.team === request.team) };
  const withTeams = running.filter((session) => existsSync(join(teamsDir(configDir), session.team, "config.json")));
  if (request.lead !== undefined) {
    const panes = await panesOf(invocation, request.lead);
    const found = withTeams.filter((session) => session.paneId !== undefined && panes.has(session.paneId));
    if (found.length === 1) return { team: found[0]!.team, session: found[0] };
    const why = found.length === 0 ? "no running Claude Code session with a team runs" : "several Claude Code sessions run";
    throw new AgentmailError("not_found", `${why} in window '${displayName(request.lead)}' (looked in ${configDir}); give the team's name`);
  }
  if (withTeams.length === 1) return { team: withTeams[0]!.team, session: withTeams[0] };
  if (withTeams.length === 0) {
    throw new AgentmailError(
      "not_found",
      `no running Claude Code session has a team in ${configDir} (teams need CLAUDE_CODE_EXPERIMENTAL_AGENT_TEAMS=1; ` +
        "CLAUDE_CONFIG_DIR moves them); give the team's name or --dir",
    );
  }
  throw new AgentmailError(
    "usage",
    `several Claude Code sessions run with teams: ${listed(withTeams)}; give the team's name, or --lead WINDOW`,
  );
}

async function membersOf(invocation: Invocation, specs: string[], team: TeamConfig): Promise<Record<string, string>> {
  const members: Record<string, string> = {};
  const known = specs.length > 0 ? await deliverable(await storeAt(invocation)) : null;
  for (const spec of specs) {
    const equals = spec.indexOf("=");
    const [name, recipient] = [spec.slice(0, equals), spec.slice(equals + 1)];
    if (equals <= 0 || recipient === "") {
      throw new AgentmailError("usage", `--member takes NAME=AGENT (e.g. codex=reviewer), not '${displayName(spec)}'`);
    }
    const problem = memberNameProblem(name);
    if (problem) throw new AgentmailError("invalid_name", `--member ${displayName(name)}: ${problem}`);
    // Another member's inbox is this one's file: importing it would take that member's mail.
    const shared = sharedInboxProblem(team, name);
    if (shared !== null) throw new AgentmailError("conflict", `--member ${displayName(spec)}: ${shared}; map another member`);
    const unreachable = recipientProblem(recipient, known!);
    if (unreachable) throw new AgentmailError(unreachable.code, `--member ${displayName(spec)}: ${unreachable.reason}; ${unreachable.fix}`);
    members[name] = recipient;
  }
  return members;
}

export async function addTeamBridge(invocation: Invocation, request: TeamAddRequest): Promise<TeamAdded> {
  const warnings: string[] = [];
  const configDir = claudeConfigDir(invocation.env);
  let team: string;
  let dir: string;
  let session: LeadSession | undefined;
  if (request.dir !== undefined) {
    dir = resolve(invocation.cwd, request.dir);
    if (!existsSync(dir) || !statSync(dir).isDirectory())
      throw new AgentmailError("not_found", `no directory ${dir}; give --dir a team's directory (the one holding config.json)`);
    dir = realpathSync(dir);
    team = request.team ?? basename(dir);
    session = runningSessions(configDir).find((candidate) => candidate.team === team);
  } else {
    ({ team, session } = await findTeam(invocation, request, configDir));
    dir = join(teamsDir(configDir), team);
  }
  if (!TEAM_NAME.test(team)) {
    throw new AgentmailError(
      "invalid_name",
      `'${displayName(team)}' is not a Claude Code team's name (such as session-1a2b3c4d: lower-case letters, digits and '-')`,
    );
  }
  const read = await readTeam(dir, team);
  if (read.state === "absent") {
    throw new AgentmailError(
      "not_found",
      `no team ${displayName(team)} in ${dir} (no config.json); a running lead's team is found with --lead WINDOW`,
    );
  }
  const config = await requireTeam(dir, team);
  if (session?.version !== undefined && !testedVersion(session.version)) {
    warnings.push(
      `the lead runs Claude Code ${displayName(session.version)}; the bridge was checked against ${TESTED_VERSIONS.oldest} to ${TESTED_VERSIONS.newest}, ` +
        "and stops if the team's format differs",
    );
  }
  let lead = request.lead ?? (await windowOfPane(invocation, session?.paneId));
  const leadProblem = lead === undefined ? null : nameProblem(lead);
  if (leadProblem !== null) {
    if (request.lead !== undefined)
      throw new AgentmailError("invalid_name", `--lead '${displayName(lead!)}' cannot be an agent's name: ${leadProblem}`);
    warnings.push(
      `the lead's window is named '${displayName(lead!)}', which cannot be an agent's name (${leadProblem}); name it with 'agentmail name'`,
    );
    lead = undefined;
  }
  const members = await membersOf(invocation, request.members ?? [], config);
  const bridge: BridgeConfig = {
    name: team,
    kind: "claude-team",
    dir,
    label: labelOf(dir, invocation.env),
    ...(lead === undefined ? {} : { lead }),
    ...(Object.keys(members).length > 0 ? { members } : {}),
  };
  await updateBridges(storeOf(invocation), (bridges) => {
    const same = bridges.find((existing) => existing.name === bridge.name);
    if (same && same.kind !== "claude-team") {
      throw new AgentmailError(
        "conflict",
        `a ${same.kind} bridge is named ${bridge.name} already; remove it first: agentmail bridge remove ${bridge.name}`,
      );
    }
    if (same && JSON.stringify(same) !== JSON.stringify(bridge)) {
      // The same team again, with other settings: the new ones, keeping the members that joined and a known lead.
      const merged = { ...bridge, lead: bridge.lead ?? same.lead, members: { ...same.members, ...bridge.members } };
      if (merged.lead === undefined) delete (merged as Partial<BridgeConfig>).lead;
      if (Object.keys(merged.members).length === 0) delete (merged as Partial<BridgeConfig>).members;
      return bridges.map((existing) => (existing === same ? merged : existing));
    }
    return same ? bridges : [...bridges, bridge];
  });
  if (lead === undefined) {
    warnings.push(
      "no tmux window is known for the lead: while it has no Claude teammate of its own it does not read its team inbox, " +
        "and mail to it waits there (add again with --lead WINDOW to have such mail go to that window's agentmail mailbox)",
    );
  }
  return { bridge: readBridges(storeOf(invocation)).find((candidate) => candidate.name === team) ?? bridge, warnings };
}

/** `claude-team:TEAM` → the bridge of that team. */
function teamBridge(invocation: Invocation, address: string): BridgeConfig {
  const prefix = "claude-team:";
  if (!address.startsWith(prefix) || address.length === prefix.length || address.includes("/")) {
    throw new AgentmailError("usage", `'${displayName(address)}' is no team; give claude-team:TEAM (e.g. claude-team:session-1a2b3c4d)`);
  }
  return findBridge(readBridges(storeOf(invocation)), "claude-team", address.slice(prefix.length));
}

export interface Membership {
  team: string;
  member: string;
  agent: string;
  state: "joined" | "already" | "left" | "absent";
}

/** Adds the calling agent to the team as member `as` (default: its own name); its inbox comes to the agent. */
export async function joinTeamAs(invocation: Invocation, address: string, as: string | undefined): Promise<Membership> {
  const bridge = teamBridge(invocation, address);
  const { caller } = await whoIsCalling(invocation, "mail");
  const member = as ?? caller.name;
  const problem = memberNameProblem(member);
  if (problem) {
    const fix = as === undefined ? "; give --as NAME" : "";
    throw new AgentmailError("invalid_name", `cannot join as '${displayName(member)}': ${problem}${fix}`);
  }
  const state = await joinTeam(bridge.dir, bridge.name, {
    name: member,
    agentType: "agentmail",
    tmuxPaneId: caller.paneId,
    cwd: invocation.cwd,
  });
  await updateBridges(storeOf(invocation), (bridges) =>
    bridges.map((existing) =>
      existing.kind === "claude-team" && existing.name === bridge.name
        ? { ...existing, members: { ...existing.members, [member]: caller.name } }
        : existing,
    ),
  );
  return { team: bridge.name, member, agent: caller.name, state };
}

/** Takes member `as` (default: the member the calling agent joined as) out of the team and the bridge. */
export async function leaveTeamAs(invocation: Invocation, address: string, as: string | undefined): Promise<Membership> {
  const bridge = teamBridge(invocation, address);
  let member = as;
  let agent = as === undefined ? undefined : bridge.members?.[as];
  if (member === undefined) {
    const { caller } = await whoIsCalling(invocation, "mail");
    agent = caller.name;
    member = Object.entries(bridge.members ?? {}).find(([, recipient]) => recipient === caller.name)?.[0] ?? caller.name;
  }
  const team = await readTeam(bridge.dir, bridge.name);
  const state = team.state === "absent" ? "absent" : await leaveTeam(bridge.dir, bridge.name, member);
  await updateBridges(storeOf(invocation), (bridges) =>
    bridges.map((existing) => {
      if (existing.kind !== "claude-team" || existing.name !== bridge.name || !existing.members?.[member!]) return existing;
      const { [member!]: _gone, ...rest } = existing.members;
      const { members: _old, ...without } = existing;
      return Object.keys(rest).length > 0 ? { ...without, members: rest } : without;
    }),
  );
  return { team: bridge.name, member, agent: agent ?? member, state };
}
