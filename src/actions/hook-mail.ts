/**
 * What an agent's hooks hand its model: the unread mail no other arrival announced (a native frame took what it
 * showed or listed), within the token budget (mail/frame.ts) and what the agent's arrival window still allows
 * (mail/arrival-window.ts), urgent first, after the line that says it is mail from other agents (HOOK_HEAD). Each
 * message shown is recorded in the mailbox's delivery record with the hook's channel; what did not fit is listed,
 * announced, and left for `agentmail receive`. A hook that could only list mail while a burst still comes says
 * nothing: the list goes once the burst ends.
 *
 *   end of a turn (`receive --hook`)        takes each message as `receive` does: written, then marked read
 *   after a tool call (`receive --after-tool`)   claims the messages first (announce), writes the hook's one JSON
 *                                           document, then marks the shown ones read: its output counts only whole
 */
import { allowanceOf, listDue, newestOf, windowAfter } from "../mail/arrival-window.ts";
import type { ArrivalChannel, DeliveryEvent } from "../mail/arrival.ts";
import { returnedNotices, type ReturnedMail } from "../mail/bounce.ts";
import { isUrgent } from "../mail/fields.ts";
import type { Message } from "../mail/message.ts";
import { urgentFirst } from "../mail/order.ts";
import { budgetOf, composeMail, entryFor, HOOK_HEAD, LIST_RESERVE, restList, type Allowance, type Budget } from "../mail/frame.ts";
import { whoIsCalling } from "../identity/caller.ts";
import type { Invocation } from "../identity/invocation.ts";
import type { Store } from "../store/store.ts";
import { readWindow, writeWindow } from "../store/local/window-file.ts";
import type { Caller } from "../tmux/caller.ts";
import { receiveMail, withoutExpired } from "./receive.ts";
import { pointHooks, setStatus } from "./status.ts";

/** A show that found no room for the message: it stays unread, to be listed. */
class NoRoom extends Error {}

const byUrgency = (messages: Message[]): Message[] => [...messages.filter(isUrgent), ...messages.filter((message) => !isUrgent(message))];

function events(channel: ArrivalChannel, pane: string, shown: Iterable<[Message | string, DeliveryEvent["shown"]]>): DeliveryEvent[] {
  const at = new Date().toISOString();
  const recorded: DeliveryEvent[] = [];
  for (const [message, kind] of shown)
    recorded.push({ id: typeof message === "string" ? message : message.id, event: "notified", at, channel, shown: kind, pane });
  return recorded;
}

/** The agent's unread mail that no arrival announced, urgent first. */
async function freshUnread(store: Store, agent: string): Promise<Message[]> {
  const announced = await store.announced(agent);
  return byUrgency((await store.unread(agent)).filter((message) => !announced.has(message.id)));
}

export interface HookTarget {
  store: Store;
  /** The local mail directory, where the agent's arrival window is kept (store/local/window-file.ts). */
  root: string;
  agent: string;
  pane: string;
  confirm(): void;
  budget: Budget;
}

/** The room for mail in a hook's output: the budget less the opening line. */
const roomOf = (budget: Budget) => Math.max(0, budget.chars - HOOK_HEAD.length - 1);

/**
 * Lists `rest` (fresh mail) within `left` characters, announced for this arrival: only what this hook claimed is
 * written (another arrival may have taken some meanwhile). Returns how many were listed or counted.
 */
async function listRest(
  target: HookTarget,
  rest: Message[],
  left: number,
  write: (text: string) => void,
  opening: string,
): Promise<number> {
  const list = restList(rest, left);
  if (list.text === "") return 0;
  const claimed = new Set(await target.store.announce(target.agent, events("stop-hook", target.pane, list.shown)));
  if (claimed.size === 0) return 0;
  write(
    `${opening}${
      restList(
        rest.filter((message) => claimed.has(message.id)),
        left,
      ).text
    }`,
  );
  return claimed.size;
}

/**
 * The end-of-turn hook: takes fresh mail one message at a time (own mailbox, then role queues), each written by
 * `write` before it is marked read, while the budget and the arrival window have room; then lists the agent's other
 * fresh mail and announces it. With no room in the window for a whole message, it only lists, once the burst has
 * ended (arrival-window.ts: until then it says nothing); last, what it returned to its senders instead of showing
 * (their time to live ran out: mail/bounce.ts returnedNotice). Returns how many messages it wrote of: shown or listed,
 * or with none of those, returned; nothing written, nothing changed.
 */
export async function stopHookMail(target: HookTarget, writeOut: (text: string) => void): Promise<number> {
  const { store, root, agent, budget } = target;
  const now = Date.now();
  // Everything written counts in the window: the opening line, the messages, the list.
  let written = 0;
  const write = (text: string) => {
    writeOut(text);
    written += text.length;
  };
  const window = readWindow(root, agent);
  const allowance = allowanceOf(window, budget, now);
  let left = roomOf(budget);
  let shownChars = 0;
  const shown: [Message, DeliveryEvent["shown"]][] = [];
  // Mail whose time to live ran out is returned to its sender instead of shown, and the agent is told, last.
  const returned: ReturnedMail[] = [];
  while (shown.length < Math.min(budget.messages, allowance.messages)) {
    let kind: DeliveryEvent["shown"];
    const show = (message: Message) => {
      const separator = shown.length === 0 ? 0 : 1;
      const fit = Math.min(left, allowance.chars - shownChars + separator);
      const entry = entryFor(message, fit, shown.length === 0 && allowance.opens, LIST_RESERVE);
      if (entry === null) throw new NoRoom();
      write(shown.length === 0 ? `${HOOK_HEAD}\n${entry.text}` : `\n${entry.text}`);
      left -= entry.text.length + separator;
      shownChars += entry.text.length;
      kind = entry.shown;
    };
    let message: Message | null;
    try {
      message = await receiveMail(store, agent, show, {
        onSkip: () => {},
        prefer: urgentFirst,
        confirm: target.confirm,
        leaveAnnounced: true,
        onReturned: (each) => void returned.push(each),
      });
    } catch (error) {
      if (error instanceof NoRoom) break;
      throw error;
    }
    if (!message) break;
    shown.push([message, kind!]);
    if (kind! === "cut") break;
  }
  if (shown.length === 0) {
    const listed = await listOnly(target, window, allowance, now, write);
    if (listed > 0) writeWindow(root, agent, windowAfter(window, budget, now, 0, written));
    if (returned.length > 0) write(`${listed > 0 ? "\n" : ""}${returnedNotices(returned)}`);
    return listed + returned.length;
  }
  // Told after the marks, best effort: the messages shown are delivered whether or not the rest gets out.
  try {
    const more = await store.countUnread(agent);
    const listed = more > 0 ? await listRest(target, await freshUnread(store, agent), left - 1, write, "\n") : 0;
    for (const [mailbox, group] of byMailbox(shown)) await store.recordDelivery(mailbox, events("stop-hook", target.pane, group));
    if (returned.length > 0) write(`\n${returnedNotices(returned)}`);
    return shown.length + listed;
  } catch {
    return shown.length;
  } finally {
    writeWindow(root, agent, windowAfter(window, budget, now, shown.length, written));
  }
}

/**
 * The end-of-turn hook with no room for a whole message: the fresh mail listed, once the burst has ended, in what is
 * left of the window's characters (at least LIST_RESERVE: a count and a subject or two).
 */
async function listOnly(
  target: HookTarget,
  window: ReturnType<typeof readWindow>,
  allowance: Allowance,
  now: number,
  write: (text: string) => void,
): Promise<number> {
  const { store, agent, budget } = target;
  if ((await store.countUnread(agent)) === 0) return 0;
  target.confirm();
  const fresh = await freshUnread(store, agent);
  if (fresh.length === 0 || listDue(window, budget, newestOf(fresh), now) !== null) return 0;
  const left = allowance.chars - HOOK_HEAD.length - 1;
  return listRest(
    target,
    fresh,
    allowance.opens ? roomOf(budget) : Math.min(roomOf(budget), Math.max(LIST_RESERVE, left)),
    write,
    `${HOOK_HEAD}\n`,
  );
}

/** With no mail to show: the notices of what was returned instead, alone (how many; none, nothing written). */
function sayReturned(returned: readonly ReturnedMail[], write: (text: string) => void): number {
  if (returned.length > 0) write(returnedNotices(returned));
  return returned.length;
}

function byMailbox(shown: [Message, DeliveryEvent["shown"]][]): Map<string, [Message, DeliveryEvent["shown"]][]> {
  const groups = new Map<string, [Message, DeliveryEvent["shown"]][]>();
  for (const entry of shown) {
    const mailbox = entry[0].to;
    groups.set(mailbox, [...(groups.get(mailbox) ?? []), entry]);
  }
  return groups;
}

/**
 * The post-tool hook: the agent's fresh mail (own mailbox; role mail waits for the end of the turn) composed within
 * the budget, claimed for this arrival, handed to `write` as one text, and the messages shown marked read after.
 * Fresh mail whose time to live ran out is returned to its sender instead, as receive does, and the text ends saying
 * so. Cheap without mail: one count from the mailbox's cursor. Returns how many messages the text carries.
 */
export async function toolHookMail(target: HookTarget, write: (text: string) => void): Promise<number> {
  const { store, root, agent, budget } = target;
  target.confirm();
  const unread = await store.countUnread(agent);
  if (unread === 0) return 0;
  const announced = await store.announced(agent);
  // `.announced` may still list messages a plain receive has read since: only ids tell that none is fresh.
  if (unread <= announced.size && (await store.unreadIds(agent)).every((id) => announced.has(id))) return 0;
  const returned: ReturnedMail[] = [];
  const unannounced = (await store.unread(agent)).filter((message) => !announced.has(message.id));
  const fresh = byUrgency(await withoutExpired(store, agent, unannounced, (each) => void returned.push(each)));
  if (fresh.length === 0) return sayReturned(returned, write);
  const now = Date.now();
  const window = readWindow(root, agent);
  const allowance = allowanceOf(window, budget, now);
  const composed = composeMail(fresh, budget, roomOf(budget), allowance);
  // Only a list to give while a burst still comes: the list waits for its end.
  if (composed.shownChars === 0 && !allowance.opens && listDue(window, budget, newestOf(fresh), now) !== null)
    return sayReturned(returned, write);
  const claimed = new Set(await store.announce(agent, events("tool-hook", target.pane, composed.shown)));
  if (claimed.size === 0) return sayReturned(returned, write);
  // Another arrival claimed some meanwhile: the text carries only what this one claimed.
  const mine =
    claimed.size === composed.shown.size
      ? composed
      : composeMail(
          fresh.filter((message) => claimed.has(message.id)),
          budget,
          roomOf(budget),
          allowance,
        );
  write(`${HOOK_HEAD}\n${mine.text}${returned.length > 0 ? `\n${returnedNotices(returned)}` : ""}`);
  let shown = 0;
  for (const [id, kind] of mine.shown)
    if (kind === "whole" || kind === "cut") {
      shown++;
      await store.markRead(agent, id);
    }
  writeWindow(root, agent, windowAfter(window, budget, now, shown, HOOK_HEAD.length + 1 + mine.text.length));
  return mine.shown.size;
}

/** The exit code of a hook that showed mail: the agent CLIs pass a hook's stderr to the model on exit 2. */
export const HOOK_EXIT_MAIL = 2;

/**
 * The hook at the end of an agent's turn (`receive --hook`): fresh mail within the budget, written through `write`
 * (stderr) as stopHookMail takes it; exit HOOK_EXIT_MAIL when something was written, 0 otherwise. Never fails the
 * turn: anything that goes wrong is silence with exit 0, and a message whose showing failed stays unread. The pane is
 * pointed at its doorbell, which is emptied once nothing is unread, so the installed Stop hook's shell can skip
 * starting agentmail until mail comes (mail/doorbell.ts). `ready`: no mail sets the status ready (the Stop hook's
 * other half, without a second process); that part fails as `agentmail status ready` would. With no `write` (stderr
 * closed) nothing is shown, so nothing is taken.
 */
export async function receiveOnTurn(invocation: Invocation, write: ((text: string) => void) | null, ready = false): Promise<number> {
  const delivered = await deliverOnTurn(invocation, write);
  if (delivered === true) return HOOK_EXIT_MAIL;
  if (ready) await setStatus(invocation, "ready", delivered || undefined);
  return 0;
}

/** true when mail went out; otherwise what tmux said about the caller, if it was asked (or false). */
async function deliverOnTurn(invocation: Invocation, write: ((text: string) => void) | null): Promise<true | Caller | false> {
  if (write === null) return false;
  let tmux: Caller | undefined;
  try {
    const receiver = await whoIsCalling(invocation, "receive");
    const { store, caller, confirm } = receiver;
    tmux = receiver.tmux;
    pointHooks(store, invocation.env, caller.name, invocation.codexThread);
    const root = store.localRoot();
    const target = { store, root, agent: caller.name, pane: caller.paneId, confirm, budget: budgetOf(invocation.env) };
    if ((await stopHookMail(target, write)) === 0) {
      await store.doorbells?.settle(caller.name);
      return tmux ?? false;
    }
    try {
      await store.doorbells?.settle(caller.name);
    } catch {
      // The mail is delivered; the next hook settles the bell.
    }
    return true;
  } catch {
    return tmux ?? false;
  }
}

/**
 * The post-tool hook (`receive --after-tool`, mid-turn): fresh mail within the budget handed to `write` as one text
 * (toolHookMail); nothing without mail. Never fails the agent's tool call.
 */
export async function receiveAfterTool(invocation: Invocation, write: (text: string) => void): Promise<void> {
  try {
    const { store, caller, confirm } = await whoIsCalling(invocation, "receive");
    const root = store.localRoot();
    await toolHookMail({ store, root, agent: caller.name, pane: caller.paneId, confirm, budget: budgetOf(invocation.env) }, write);
    // As at the end of a turn: with nothing unread the bell goes quiet, so the next tool's hook need not start agentmail.
    await store.doorbells?.settle(caller.name);
  } catch {
    // Silence: the tool call goes on.
  }
}
