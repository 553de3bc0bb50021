import { validateName } from "../core/addresses.ts";
import { AgentmailError } from "../core/errors.ts";
import type { Message } from "../core/message.ts";
import { displayName, encodeName } from "../core/names.ts";
import type { AgentStatus, Store } from "../store/store.ts";
import { pinWindowName } from "../tmux/rename.ts";
import { claimName, NAME_HELD_MS, whoNames, type Invocation } from "./context.ts";
import { activeClaim, claimFor, NAME_VARIABLE, tmuxServerOf } from "./identity.ts";

export interface Naming {
  name: string;
  pane: string;
  /** The name the window had before, when it changed. */
  previous: string | null;
  /** Unread messages moved from the previous name's mailbox to the new one. */
  moved: number;
}

/** Another tmux server: another socket or server pid, or the same ones on another machine. */
const elsewhere = (record: AgentStatus, server: string, host: string) =>
  record.server !== server || (record.host !== undefined && record.host !== host);

function taken(name: string, by: string): AgentmailError {
  return new AgentmailError("conflict", `the name "${displayName(name)}" is taken by ${by}; choose another`);
}

/** Another agent that registered the name from another tmux server lately, which this server cannot see. */
function heldElsewhere(record: AgentStatus | null, server: string, host: string, now: number): record is AgentStatus & { server: string } {
  return (
    record !== null && record.server !== undefined && elsewhere(record, server, host) && now - Date.parse(record.updated_at) < NAME_HELD_MS
  );
}

/**
 * Names the caller's agent: renames its window (by id) to `name`, pins the name so tmux never renames it again,
 * and registers name and pane in the store. Refused, changing nothing, when the name is malformed or another
 * window on the tmux server, a group, or an agent registered lately from another tmux server has it. Unread mail
 * waiting under the window's previous name moves along when no other window has that name.
 */
export async function nameAgent(invocation: Invocation, name: string): Promise<Naming> {
  validateName("agent", name);
  encodeName(name);
  const context = await whoNames(invocation);
  const { store, caller, host } = context;
  const server = tmuxServerOf(invocation.env) ?? "";
  const other = caller.serverWindows.find((window) => window.name === name && window.id !== caller.windowId);
  if (other) throw taken(name, `the window of pane ${other.paneId} in session ${displayName(other.sessionName)}`);
  const claim = activeClaim(context.claims, name, invocation.env);
  if (claim && claim.pane !== caller.paneId) throw taken(name, `the agent in pane ${claim.pane} (started with ${NAME_VARIABLE})`);
  if ((await store.memberships("groups")).has(name))
    throw taken(name, `a group (@${displayName(name)}); pick another name, or remove the group`);
  const record = await store.status(name);
  if (heldElsewhere(record, server, host, Date.now()))
    throw taken(name, `pane ${record.pane} of another tmux server (${displayName(record.server)})`);
  // An agent of another host that used the name lately (a store shared by hosts) keeps it.
  await claimName(context, name);

  const previous = caller.name;
  // The caller's registrations under other names (its window's earlier ones) give way to this one; it keeps their status.
  const mine = (await store.statuses()).filter((status) => status.pane === caller.paneId && (status.server ?? server) === server);
  const carried = record?.pane === caller.paneId ? record : (mine.find((each) => each.name === previous) ?? mine[0]);
  const status = carried?.status ?? "ready";
  const pinned = await pinWindowName(caller.windowId, name, invocation.env);
  if (pinned !== name) {
    throw new AgentmailError(
      "invalid_name",
      `tmux stored the name as "${displayName(pinned)}", not "${displayName(name)}"; choose a name of plain characters`,
    );
  }
  // Named as AGENTMAIL_NAME says, the window's agent claims the name (no other window has it: checked above).
  const pin = { window: caller.windowId, server, host };
  await store.writeStatus(name, status, caller.paneId, new Date(), pin, claimFor(invocation.env, name, false, 1));
  for (const stale of mine) if (stale.name !== name) await store.removeStatus(stale.name);
  const sharedOldName = caller.serverWindows.some((window) => window.name === previous && window.id !== caller.windowId);
  const moved = previous === name || sharedOldName ? 0 : await moveUnread(store, previous, name);
  return { name, pane: caller.paneId, previous: previous === name ? null : previous, moved };
}

/**
 * Hands the unread mail of `from` to `to`, oldest first, through the same take-then-show step as receive: a copy
 * (same id) is appended to the new mailbox before the old one counts as delivered, and a copy that cannot be
 * written leaves its message unread where it was.
 */
async function moveUnread(store: Store, from: string, to: string): Promise<number> {
  let moved = 0;
  const handOver = (message: Message) => store.append({ ...message, to, read_flag: false });
  while (await store.take(from, handOver)) moved++;
  return moved;
}
