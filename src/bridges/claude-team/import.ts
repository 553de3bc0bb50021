/**
 * The claude-team part of a sync pass: what a Claude Code team's members write to a member that is an agentmail
 * agent (its name is an agent's, or `--member NAME=AGENT` / `bridge join --as` maps it) becomes that agent's mail,
 * once. The inbox is read without the lock; each entry to import is written to the ledger (with the whole record it
 * becomes) and fsynced, the record appended, and only then is the entry settled: removed from the inbox under
 * Claude's lock, held for a read and a rename. A pass killed anywhere in between leaves the ledger entry, and the
 * next pass delivers it if no mailbox holds it yet and settles it; an entry that is in the ledger is never imported
 * again. So the agentmail copy exists before the inbox forgets the message, even when the lead deletes the whole
 * team (a clean exit does) right after.
 *
 * Never imported: the lead's inbox and those of Claude's own teammates (Claude reads them itself), nor an inbox file
 * two members share (Claude's sanitizer maps `x.y` and `x-y` to one file: paths.ts). Left alone, with
 * the reason, and never blocking the others: an inbox that is not a JSON array (never written over), an entry Claude
 * would drop, an entry over the message size limit, a mapping whose recipient cannot take mail. A config.json or an
 * entry in a format agentmail does not know stops the whole team's bridge for the pass, with the rule named.
 */
import { createHash } from "node:crypto";
import { basename, join } from "node:path";
import { nameProblem } from "../../mail/addresses.ts";
import { newId } from "../../mail/ids.ts";
import { MAX_MESSAGE_BYTES } from "../../mail/message.ts";
import { displayName } from "../../mail/names.ts";
import type { Store } from "../../store/store.ts";
import type { BridgeConfig } from "../config.ts";
import { type Deliverable, deliverImported, recipientProblem } from "../deliver.ts";
import type { BridgeRecord } from "../fields.ts";
import type { Left } from "../scan.ts";
import { clearLedger, recordDelivered, recordDone, recordImports, type EntryImport, type PendingEntryImport } from "../ledger.ts";
import { entryKey, entryProblem, formatChange, FORMAT_STOP, readInbox, settleInbox, type InboxEntry } from "./inbox.ts";
import { CLAUDE_RETRY_MS, requireOwnDirectory } from "./lock.ts";
import { entryToRecord } from "./mapping.ts";
import { inboxesDir, inboxFile, inboxFileName, teamConfigFile } from "./paths.ts";
import { readByClaude, readTeam, sharedInboxProblem, type TeamConfig } from "./team-config.ts";

export interface TeamPassContext {
  root: string;
  store: Store;
  known: Deliverable;
  leave(left: Left): void;
  imported(bridge: string, entry: { file: string; to: string; id: string }): void;
  /** Unread entries in the inboxes of members that are not agentmail's: the team's own mail. */
  others(bridge: string, count: number): void;
}

interface Work {
  bridge: string;
  path: string;
  file: string;
  key: string;
  record: BridgeRecord;
}

/** How many entries one batch imports at most: a batch holds the sync lock, which others wait for. */
const BATCH_ENTRIES = 200;

const explain = (error: unknown) => (error instanceof Error ? error.message : String(error));

const inboxLabel = (bridge: BridgeConfig, member: string) => join(bridge.label, "inboxes", inboxFileName(member));

/** An entry as the report names it: its inbox and its msg_id (else a short hash of it). */
function entryLabel(inbox: string, item: unknown): string {
  const id = (item as InboxEntry | null)?.msg_id;
  if (typeof id === "string") return `${inbox} ${displayName(id)}`;
  return `${inbox} entry ${createHash("sha256").update(JSON.stringify(item)).digest("hex").slice(0, 12)}`;
}

/** The recipient a member's inbox goes to, a reason it cannot go anywhere now, or null: not agentmail's member. */
function recipientOf(bridge: BridgeConfig, member: string, known: Deliverable): { to: string } | { problem: string } | null {
  const mapped = bridge.members && Object.hasOwn(bridge.members, member) ? bridge.members[member] : undefined;
  if (mapped === undefined) return known.agents.has(member) ? { to: member } : null;
  const setting = `--member ${member}=${mapped}`;
  if (mapped.startsWith("@") || mapped.startsWith("role:")) {
    const problem = recipientProblem(mapped, known);
    return problem ? { problem: `${setting}: ${problem.reason}; ${problem.fix}` } : { to: mapped };
  }
  // A mapped agent (bridge join maps the agent that joined) need not have mail yet: the mapping says it is one.
  const problem = nameProblem(mapped);
  return problem ? { problem: `${setting}: '${displayName(mapped)}' cannot be an agent's name: ${problem}` } : { to: mapped };
}

/** Per inbox, how many entries of each key the ledger still holds (imported, not yet settled): never imported again. */
function inFlight(pending: readonly PendingEntryImport[]): Map<string, Map<string, number>> {
  const byPath = new Map<string, Map<string, number>>();
  for (const entry of pending) {
    const counts = byPath.get(entry.path) ?? new Map<string, number>();
    counts.set(entry.key, (counts.get(entry.key) ?? 0) + 1);
    byPath.set(entry.path, counts);
  }
  return byPath;
}

interface MemberInbox {
  member: string;
  path: string;
  file: string;
  items: unknown[];
  recipient: { to: string } | { problem: string } | null;
}

/** The team's inboxes to look at now, or null when the team cannot be bridged now (reported). */
async function teamInboxes(bridge: BridgeConfig, context: TeamPassContext): Promise<MemberInbox[] | null> {
  const read = await readTeam(bridge.dir, bridge.name);
  if (read.state === "absent") {
    const reason =
      "the team is gone: its lead exited, which deletes the team and its inboxes; " +
      `remove this bridge (agentmail bridge remove ${bridge.name}) and add the new session's team`;
    context.leave({ bridge: bridge.name, file: bridge.label, reason });
    return null;
  }
  if (read.state === "changed") {
    const file = join(bridge.label, basename(teamConfigFile(bridge.dir)));
    context.leave({ bridge: bridge.name, file, reason: `${read.problem}. ${FORMAT_STOP}` });
    return null;
  }
  try {
    // Settling an import writes there: a team directory or inboxes/ that is a symlink is not imported from at all.
    requireOwnDirectory(bridge.dir);
    requireOwnDirectory(inboxesDir(bridge.dir));
  } catch (error) {
    context.leave({ bridge: bridge.name, file: join(bridge.label, "inboxes"), reason: explain(error) });
    return null;
  }
  const inboxes: MemberInbox[] = [];
  for (const member of outsideMembers(read.config)) {
    const path = inboxFile(bridge.dir, member);
    const file = inboxLabel(bridge, member);
    const shared = sharedInboxProblem(read.config, member);
    if (shared !== null) {
      // Whose entry is whose cannot be told: Claude reads the file for its member, and an import would take its mail.
      const reason =
        `not imported for '${displayName(member)}': ${shared}; its entries stay for Claude Code. ` +
        `Give agentmail's member another name: agentmail bridge leave claude-team:${bridge.name} --as ${member}, then bridge join --as NAME`;
      context.leave({ bridge: bridge.name, file, reason });
      continue;
    }
    const snapshot = readInbox(path);
    if (snapshot.state === "absent") continue;
    if (snapshot.state === "unreadable") {
      const reason = `${snapshot.reason}; agentmail does not write over it (Claude Code would, on its next write to it): save what it holds, then fix or remove it`;
      context.leave({ bridge: bridge.name, file, reason });
      continue;
    }
    for (const item of snapshot.items) {
      const change = entryProblem(item) === undefined ? formatChange(item as InboxEntry) : undefined;
      if (change !== undefined) {
        context.leave({ bridge: bridge.name, file: entryLabel(file, item), reason: `${change}. ${FORMAT_STOP}` });
        return null;
      }
    }
    inboxes.push({ member, path, file, items: snapshot.items, recipient: recipientOf(bridge, member, context.known) });
  }
  return inboxes;
}

/** Members whose inboxes nobody in Claude reads: those agentmail or another tool added. */
const outsideMembers = (config: TeamConfig) =>
  config.members.filter((member) => !readByClaude(config, member)).map((member) => member.name);

/** One batch over every claude-team bridge; true when entries remain for another batch. */
export async function importTeamBatch(
  bridges: readonly BridgeConfig[],
  context: TeamPassContext,
  pending: readonly PendingEntryImport[],
): Promise<boolean> {
  const skipped = inFlight(pending);
  const work: Work[] = [];
  let more = false;
  for (const bridge of bridges) {
    if (bridge.kind !== "claude-team") continue;
    const inboxes = await teamInboxes(bridge, context);
    if (inboxes === null) continue;
    let others = 0;
    for (const inbox of inboxes) {
      const skip = new Map(skipped.get(inbox.path) ?? []);
      for (const item of inbox.items) {
        const problem = entryProblem(item);
        if (problem !== undefined) {
          if (inbox.recipient !== null) {
            const reason = `Claude Code would drop this entry (${problem}); it stays in the inbox`;
            context.leave({ bridge: bridge.name, file: entryLabel(inbox.file, item), reason });
          }
          continue;
        }
        const entry = item as InboxEntry;
        if (entry.read === true) continue;
        if (inbox.recipient === null) {
          others++;
          continue;
        }
        if ("problem" in inbox.recipient) {
          context.leave({ bridge: bridge.name, file: inbox.file, reason: `not delivered, left in the inbox: ${inbox.recipient.problem}` });
          break;
        }
        const key = entryKey(entry);
        const waiting = skip.get(key) ?? 0;
        if (waiting > 0) {
          skip.set(key, waiting - 1);
          continue;
        }
        if (work.length >= BATCH_ENTRIES) {
          more = true;
          break;
        }
        const record = entryToRecord(entry, { id: newId(), to: inbox.recipient.to, team: bridge.name, file: inbox.file, now: new Date() });
        const size = new TextEncoder().encode(record.message).length;
        if (size > MAX_MESSAGE_BYTES) {
          const reason = `its text is ${size} bytes, over the ${MAX_MESSAGE_BYTES}-byte limit for a message; it stays in the inbox`;
          context.leave({ bridge: bridge.name, file: entryLabel(inbox.file, entry), reason });
          continue;
        }
        work.push({ bridge: bridge.name, path: inbox.path, file: inbox.file, key, record });
      }
    }
    context.others(bridge.name, others);
  }
  await commit(work, context);
  return more;
}

/** Ledger (fsynced), messages (each fsynced), entries settled, ledger cleared. */
async function commit(work: Work[], context: TeamPassContext): Promise<void> {
  if (work.length === 0) return;
  const at = new Date().toISOString();
  recordImports(
    context.root,
    work.map(
      (item): EntryImport => ({
        op: "import",
        id: item.record.id,
        bridge: item.bridge,
        kind: "claude-team",
        path: item.path,
        file: item.file,
        to: item.record.to,
        key: item.key,
        record: item.record,
        at,
      }),
    ),
  );
  const delivered: Work[] = [];
  for (const item of work) {
    try {
      await deliverImported(context.store, item.record);
      delivered.push(item);
      context.imported(item.bridge, { file: item.file, to: item.record.to, id: item.record.id });
    } catch (error) {
      const reason = `could not be delivered to ${item.record.to}: ${explain(error)}; a later pass tries again`;
      context.leave({ bridge: item.bridge, file: item.file, reason });
    }
  }
  recordDelivered(
    context.root,
    delivered.map((item) => item.record.id),
  );
  recordDone(
    context.root,
    await settle(
      delivered.map((item) => ({ ...item, id: item.record.id })),
      context,
    ),
  );
  clearLedger(context.root);
}

/** An imported entry, as settling it needs it. */
interface Settling {
  id: string;
  bridge: string;
  path: string;
  file: string;
  key: string;
}

/**
 * Removes delivered entries from their inboxes, one lock cycle per inbox; the ids whose entries are settled (or whose
 * inbox is gone: the team ended). An inbox that cannot be settled now keeps its entries in the ledger for a later pass.
 */
async function settle(delivered: readonly Settling[], context: TeamPassContext): Promise<string[]> {
  const byPath = new Map<string, Settling[]>();
  for (const item of delivered) byPath.set(item.path, [...(byPath.get(item.path) ?? []), item]);
  const done: string[] = [];
  for (const [path, items] of byPath) {
    const counts = new Map<string, number>();
    for (const item of items) counts.set(item.key, (counts.get(item.key) ?? 0) + 1);
    try {
      // On Claude's own terms: an inbox still locked then keeps its entries in the ledger for a later pass.
      await settleInbox(path, counts, CLAUDE_RETRY_MS);
      for (const item of items) done.push(item.id);
    } catch (error) {
      const ids = items.map((item) => item.id).join(", ");
      const reason = `imported as ${ids}, but not yet removed from the inbox (${explain(error)}); a later pass removes it, and never imports it again`;
      context.leave({ bridge: items[0]!.bridge, file: items[0]!.file, reason });
    }
  }
  return done;
}

/**
 * Finishes the imports of team entries a killed pass left in the ledger: delivers each that no mailbox holds yet
 * (its record is in the ledger, so the inbox need not exist any more), then settles it. The ids finished.
 */
export async function recoverEntryImports(
  pending: readonly PendingEntryImport[],
  context: TeamPassContext,
  holds: (mailbox: string, id: string) => Promise<boolean>,
): Promise<string[]> {
  const delivered: PendingEntryImport[] = [];
  for (const entry of pending) {
    if (!entry.delivered) {
      try {
        // Delivering again is safe: each target already holding the id is passed over.
        await deliverImported(context.store, entry.record, holds);
        recordDelivered(context.root, [entry.id]);
        context.imported(entry.bridge, { file: entry.file, to: entry.to, id: entry.id });
      } catch (error) {
        const reason = `could not be delivered to ${entry.to}: ${explain(error)}; a later pass tries again`;
        context.leave({ bridge: entry.bridge, file: entry.file, reason });
        continue;
      }
    }
    delivered.push(entry);
  }
  return settle(delivered, context);
}
