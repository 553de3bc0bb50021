/**
 * Sending to `claude-team:TEAM/MEMBER`: the message is appended to the member's inbox the way Claude Code itself
 * appends (inbox.ts), in Claude's own entry shape, as the sender's name, durably before its id is returned. A member
 * the team's config.json does not list is refused with the members named (Claude refuses such a name too, and an
 * inbox for it would be an orphan); so are a team in a format agentmail does not know and a sender named like one of
 * Claude's own (`team-lead`, `user`, `system`), whose mail Claude would mark as forged.
 *
 * The lead is special: it reads its inbox only while it has a Claude teammate of its own (its poller runs only
 * then). When it does not, or it is not running, the sender is told, and the message goes where it will be read:
 * into the agentmail mailbox of the lead's window (`--lead WINDOW`, or found when the bridge was added), whose hooks
 * and mailman show it; with no window known, into the inbox, where it waits for the poller (or, with the lead not
 * running, nowhere: it is refused).
 */
import { AgentmailError } from "../../mail/errors.ts";
import { displayName } from "../../mail/names.ts";
import { closestNames } from "../../mail/suggest.ts";
import { isAlive } from "../../store/durable/process-identity.ts";
import type { Store } from "../../store/store.ts";
import type { BridgeConfig } from "../config.ts";
import type { BridgeRecord } from "../fields.ts";
import { recordSent } from "../ledger.ts";
import { appendToInbox, entryProblem, readInbox, type InboxEntry } from "./inbox.ts";
import { recordToEntry } from "./mapping.ts";
import { inboxFile, inboxFileName } from "./paths.ts";
import { LEAD, readByClaude, requireTeam, sharedInboxProblem, sharingInbox, type TeamConfig } from "./team-config.ts";
import { join } from "node:path";

/** Names Claude treats as its own: an entry from one is shown to the lead's model as not verified. */
const CLAUDE_SENDERS = new Set([LEAD, "user", "system"]);

/** An unread entry this old in the lead's inbox says its poller is not running (it takes entries within ~1 s). */
const UNPOLLED_MS = 5_000;

export interface TeamSendRequest {
  root: string;
  store: Store;
  bridge: BridgeConfig;
  member: string;
  /** The sender's agent name. */
  from: string;
  record: BridgeRecord;
  now: Date;
  /** Told what the sender should know (the lead does not poll, and where the message went instead). */
  note: (text: string) => void;
}

export interface TeamSent {
  record: BridgeRecord;
  /** Where it went, as the user sees it: the inbox, or the lead's agentmail mailbox. */
  file: string;
}

/** `TEAM/MEMBER` → its parts; a usage error naming the form otherwise. */
export function splitTeamTarget(target: string): { team: string; member: string } {
  const slash = target.indexOf("/");
  if (slash <= 0 || slash === target.length - 1) {
    throw new AgentmailError(
      "usage",
      `'claude-team:${displayName(target)}' names no member; a team address is claude-team:TEAM/MEMBER (e.g. claude-team:session-1a2b3c4d/team-lead)`,
    );
  }
  return { team: target.slice(0, slash), member: target.slice(slash + 1) };
}

function unknownMember(config: TeamConfig, member: string): AgentmailError {
  const names = config.members.map((candidate) => candidate.name);
  const closest = closestNames(member, names);
  const hint = closest.length > 0 ? ` (did you mean ${closest.map((name) => `'${displayName(name)}'`).join(", ")}?)` : "";
  return new AgentmailError(
    "unknown_recipient",
    `team ${displayName(config.name)} has no member '${displayName(member)}'${hint}; its members are ${names.map(displayName).join(", ")}. ` +
      `Nothing was sent: an inbox for a name the team does not list is read by nobody (an agent joins with: agentmail bridge join claude-team:${displayName(config.name)} --as NAME)`,
  );
}

/** Why the lead will not read its team inbox soon, or null when its poller runs. */
function leadNotPolling(config: TeamConfig, teamDir: string, now: Date): { reason: string; running: boolean } | null {
  const pid = config.leadProcess?.pid;
  if (typeof pid !== "number" || !isAlive(pid)) {
    return { reason: `its lead is not running (pid ${typeof pid === "number" ? pid : "unknown"})`, running: false };
  }
  const lead = config.members.find((member) => member.agentId === config.leadAgentId);
  const teammates = config.members.filter((member) => member !== lead && readByClaude(config, member));
  if (teammates.length === 0) {
    return { reason: "its lead reads its team inbox only while it has a Claude teammate of its own, and it has none now", running: true };
  }
  const inbox = readInbox(inboxFile(teamDir, LEAD));
  if (inbox.state === "read") {
    const waiting = inbox.items.some((item) => {
      if (entryProblem(item) !== undefined || (item as InboxEntry).read === true) return false;
      const at = Date.parse((item as InboxEntry).timestamp);
      return !Number.isNaN(at) && now.getTime() - at > UNPOLLED_MS;
    });
    if (waiting)
      return {
        reason: `its lead has left messages unread in its team inbox for over ${UNPOLLED_MS / 1000} s (it is not polling it)`,
        running: true,
      };
  }
  return null;
}

export async function sendToTeam(request: TeamSendRequest): Promise<TeamSent> {
  const { bridge, member, from, record, now } = request;
  if (CLAUDE_SENDERS.has(from.toLowerCase())) {
    throw new AgentmailError(
      "invalid_name",
      `an agent named '${displayName(from)}' cannot write to a Claude Code team: Claude keeps that name for itself and would show the message as forged; send from another window`,
    );
  }
  const config = await requireTeam(bridge.dir, bridge.name);
  const target = config.members.find((candidate) => candidate.name === member);
  if (!target) throw unknownMember(config, member);
  // A shared inbox file is read by Claude for its own member only: mail for any other would reach that one.
  const readers = [target, ...sharingInbox(config, member)].filter((candidate) => readByClaude(config, candidate));
  const shared = sharedInboxProblem(config, member);
  if (shared !== null && !(readers.length === 1 && readers[0] === target)) {
    throw new AgentmailError(
      "conflict",
      `cannot write to member '${displayName(member)}' of ${displayName(bridge.name)}: ${shared}; nothing was sent`,
    );
  }
  const path = inboxFile(bridge.dir, member);
  const file = join(bridge.label, "inboxes", inboxFileName(member));
  const where = `${LEAD} of ${displayName(bridge.name)}`;
  if (member === LEAD) {
    const notPolling = leadNotPolling(config, bridge.dir, now);
    if (notPolling !== null && bridge.lead !== undefined) {
      await request.store.append({ ...record, to: bridge.lead }, { freshId: true });
      request.note(
        `${where} will not read its team inbox soon: ${notPolling.reason}; delivered to the agentmail mailbox of its window ` +
          `'${displayName(bridge.lead)}' instead, where its hooks and the mailman show it`,
      );
      return { record: { ...record, to: bridge.lead }, file: displayName(bridge.lead) };
    }
    if (notPolling !== null && !notPolling.running) {
      throw new AgentmailError(
        "unknown_recipient",
        `${where} will never read it: ${notPolling.reason}; nothing was sent. A new session has a new team: ` +
          "add it with 'agentmail bridge add claude-team --lead WINDOW' (the window's agentmail mailbox then gets such mail)",
      );
    }
    if (notPolling !== null) {
      request.note(
        `written to the team inbox of ${where}, but ${notPolling.reason}: it waits there until the lead polls again. ` +
          `To have such mail go to the lead's agentmail mailbox instead, add the bridge with --lead WINDOW`,
      );
    }
  }
  const entry = recordToEntry(record, from, now);
  await appendToInbox(path, [entry]);
  recordSent(request.root, { id: record.id, bridge: bridge.name, file: entry.msg_id!, at: record.created_at });
  return { record, file };
}
