import { addressProblem, validateName } from "../mail/addresses.ts";
import { lookAlikes } from "../mail/confusables.ts";
import { AgentmailError } from "../mail/errors.ts";
import type { Message } from "../mail/message.ts";
import { movedCopy } from "../mail/moves.ts";
import { displayName, encodeName } from "../mail/names.ts";
import type { AgentStatus, Store } from "../store/store.ts";
import { HOSTNAME } from "../store/durable/process-identity.ts";
import { pinWindowName, restoreWindowName } from "../tmux/rename.ts";
import { type CallerContext, claimName, whoIsCalling } from "../identity/caller.ts";
import { type Invocation, tmuxServerOf } from "../identity/invocation.ts";
import { activeClaim, claimFor, NAME_VARIABLE } from "../identity/name-claims.ts";
import { livesElsewhere } from "../identity/presence.ts";

export interface Naming {
  name: string;
  pane: string;
  /** The name the window had before, when it changed. */
  previous: string | null;
  /** Unread messages moved from the previous name's mailbox to the new one. */
  moved: number;
  /** Names of other agents (windows, registrations, mailboxes) this one looks like (mail/confusables.ts). */
  lookAlikes: string[];
}

function taken(name: string, by: string): AgentmailError {
  return new AgentmailError("conflict", `the name "${displayName(name)}" is taken by ${by}; choose another`);
}

/**
 * Names the caller's agent: renames its window (by id) to `name`, pins the name so tmux never renames it again,
 * and registers name and pane in the store. Refused, changing nothing, when the name is malformed or another window
 * on the tmux server, a group, the live agent of another tmux server, or one of another host seen lately has it.
 * Unread mail waiting under the window's previous name moves along (mailToMove), each delivered once under the new
 * name.
 */
export async function nameAgent(invocation: Invocation, name: string): Promise<Naming> {
  validateName("agent", name);
  encodeName(name);
  const context = await whoIsCalling(invocation, "rename");
  const { store, caller, host } = context;
  const server = tmuxServerOf(invocation.env) ?? "";
  const other = caller.serverWindows.find((window) => window.name === name && window.id !== caller.windowId);
  if (other) throw taken(name, `the window of pane ${other.paneId} in session ${displayName(other.sessionName)}`);
  const claim = activeClaim(context.claims, name, invocation.env);
  if (claim && claim.pane !== caller.paneId) throw taken(name, `the agent in pane ${claim.pane} (started with ${NAME_VARIABLE})`);
  if ((await store.memberships("groups")).has(name))
    throw taken(name, `a group (@${displayName(name)}); pick another name, or remove the group`);
  const record = await store.status(name);
  // An agent of another host that used the name lately (a store shared by hosts), or the live agent of another tmux
  // server that registered it, keeps it.
  await claimName(context, name);

  const previous = caller.name;
  // The caller's registrations under other names (its window's earlier ones) give way to this one; it keeps their status.
  const mine = (await store.statuses()).filter(
    (status) => status.pane === caller.paneId && (status.tmux_server ?? status.server ?? server) === server,
  );
  const carried = record?.pane === caller.paneId ? record : (mine.find((each) => each.name === previous) ?? mine[0]);
  const status = carried?.status ?? "ready";
  const sources = await mailToMove(context, previous, mine);
  // A `name` cut short left the names it moved mail from registered to this pane, that mail (and maybe a message
  // copied but not marked) bound for the window's current name: that move is finished first, before the window takes
  // another name, so the window never reads by a name that holds a message copied elsewhere.
  const viaPrevious = sources.includes(previous);
  if (viaPrevious) for (const source of sources) if (source !== previous) await moveUnread(store, source, previous);
  // The old name stays registered to this pane until its mail has moved: a `name` killed meanwhile is finished by the
  // next one from this pane, which finds that registration among its own.
  const journal = viaPrevious && !mine.some((each) => each.name === previous) && (await store.countUnread(previous)) > 0;
  const place = { server, host: HOSTNAME };
  if (journal) await store.writeStatus({ name: previous, status, pane: caller.paneId, at: new Date(), place });
  const pinned = await pinWindowName(caller.windowId, name, invocation.env);
  if (pinned !== name) {
    // Refused: the window gets its name back, and the registration made for the move goes.
    const auto = caller.serverWindows.some((window) => window.id === caller.windowId && window.auto);
    await restoreWindowName(caller.windowId, previous, auto, invocation.env);
    if (journal) await store.removeStatus(previous);
    throw new AgentmailError(
      "invalid_name",
      `tmux stored the name as "${displayName(pinned)}", not "${displayName(name)}"; choose a name of plain characters`,
    );
  }
  // Named as AGENTMAIL_NAME says, the window's agent claims the name (no other window has it: checked above).
  const pin = { window: caller.windowId, server, host };
  await store.writeStatus({
    name,
    status,
    pane: caller.paneId,
    at: new Date(),
    pin,
    claim: claimFor(invocation.env, name, false, 1),
    place,
  });
  let moved = 0;
  for (const source of viaPrevious ? [previous] : sources) if (source !== name) moved += await moveUnread(store, source, name);
  for (const stale of [...mine.map((each) => each.name), ...sources]) if (stale !== name) await store.removeStatus(stale);
  const others = [
    ...caller.serverWindows.filter((window) => window.id !== caller.windowId).map((window) => window.name),
    ...(await store.statuses()).filter((each) => each.pane !== caller.paneId).map((each) => each.name),
    ...(await store.mailboxes()).filter((mailbox) => mailbox !== previous && !sources.includes(mailbox)),
  ];
  return { name, pane: caller.paneId, previous: previous === name ? null : previous, moved, lookAlikes: lookAlikes(name, others) };
}

/**
 * Whose unread mail is this window's: its previous name's, and that of the names this pane registered before (a
 * rename whose move was cut short; the new name among them, when a move from it was). Not a name another window has
 * now, nor one another pane's AGENTMAIL_NAME claim holds, nor one the live agent of another tmux server registered
 * (that mail is theirs), nor a name that reads as another address (a window renamed with plain tmux to `role:x`
 * would otherwise hand over the role's queue).
 */
async function mailToMove(context: CallerContext, previous: string, mine: readonly AgentStatus[]): Promise<string[]> {
  const { caller } = context;
  const sources: string[] = [];
  for (const source of [previous, ...mine.map((each) => each.name)]) {
    if (sources.includes(source) || addressProblem(source) !== null) continue;
    if (caller.serverWindows.some((window) => window.name === source && window.id !== caller.windowId)) continue;
    const claim = activeClaim(context.claims, source, context.env);
    if (claim && claim.pane !== caller.paneId) continue;
    if (await livesElsewhere(context, source)) continue;
    sources.push(source);
  }
  return sources;
}

/**
 * Hands the unread mail of `from` to `to`, oldest first, through the same take-then-show step as receive: a copy
 * (movedCopy: same id, one move more) is appended to the new mailbox before the old one counts as delivered, and a
 * copy that cannot be written leaves its message unread where it was. A move killed after the copy and before the
 * mark is run again by the next `name`: the new mailbox already holds that copy, and does not take it twice
 * (takesMovedCopy).
 */
async function moveUnread(store: Store, from: string, to: string): Promise<number> {
  let moved = 0;
  const handOver = (message: Message) => store.append(movedCopy(message, from, to));
  while (await store.take(from, handOver)) moved++;
  return moved;
}
