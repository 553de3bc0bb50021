/**
 * What an agent's hooks hand its model: the unread mail no other arrival announced (a native frame took what it
 * showed or listed), within the token budget (delivery/frame.ts), urgent first. Each message shown is recorded in
 * the mailbox's delivery record with the hook's channel; what did not fit is listed, announced, and left for
 * `agentmail receive`.
 *
 *   end of a turn (`receive --hook`)        takes each message as `receive` does: written, then marked read
 *   after a tool call (`receive --after-tool`)   claims the messages first (announce), writes the hook's one JSON
 *                                           document, then marks the shown ones read: its output counts only whole
 */
import type { ArrivalChannel, DeliveryEvent } from "../core/arrival.ts";
import { isUrgent, urgentFirst } from "../core/mail-fields.ts";
import type { Message } from "../core/message.ts";
import { composeMail, entryFor, LIST_RESERVE, restList, type Budget } from "../delivery/frame.ts";
import type { Store } from "../store/store.ts";
import { receiveMail } from "./receive.ts";

/** A show that found no room for the message: it stays unread, to be listed. */
class NoRoom extends Error {}

const byUrgency = (messages: Message[]): Message[] => [...messages.filter(isUrgent), ...messages.filter((message) => !isUrgent(message))];

function events(channel: ArrivalChannel, pane: string, shown: Iterable<[Message | string, DeliveryEvent["shown"]]>): DeliveryEvent[] {
  const at = new Date().toISOString();
  return [...shown].map(([message, kind]) => ({
    id: typeof message === "string" ? message : message.id,
    event: "notified",
    at,
    channel,
    shown: kind,
    pane,
  }));
}

/** The agent's unread mail that no arrival announced, urgent first. */
async function freshUnread(store: Store, agent: string): Promise<Message[]> {
  const announced = await store.announced(agent);
  return byUrgency((await store.unread(agent)).filter((message) => !announced.has(message.id)));
}

export interface HookTarget {
  store: Store;
  agent: string;
  pane: string;
  confirm(): void;
  budget: Budget;
}

/**
 * The end-of-turn hook: takes fresh mail one message at a time (own mailbox, then role queues), each written by
 * `write` before it is marked read, while the budget has room; then lists the agent's other fresh mail and announces
 * it. Returns how many messages it wrote (shown or listed); nothing written, nothing changed.
 */
export async function stopHookMail(target: HookTarget, write: (text: string) => void): Promise<number> {
  const { store, agent, budget } = target;
  let left = budget.chars;
  const shown: [Message, DeliveryEvent["shown"]][] = [];
  while (shown.length < budget.messages) {
    let kind: DeliveryEvent["shown"];
    const show = (message: Message) => {
      const entry = entryFor(message, left - (shown.length === 0 ? 0 : 1), shown.length === 0, LIST_RESERVE);
      if (entry === null) throw new NoRoom();
      write(shown.length === 0 ? `You got new mail\n${entry.text}` : `\n${entry.text}`);
      left -= entry.text.length + (shown.length === 0 ? 0 : 1);
      kind = entry.shown;
    };
    let message: Message | null;
    try {
      message = await receiveMail(store, agent, show, {
        onSkip: () => {},
        prefer: urgentFirst,
        confirm: target.confirm,
        leaveAnnounced: true,
      });
    } catch (error) {
      if (error instanceof NoRoom) break;
      throw error;
    }
    if (!message) break;
    shown.push([message, kind!]);
    if (kind! === "cut") break;
  }
  if (shown.length === 0) return 0;
  // Told after the marks, best effort: the messages shown are delivered whether or not the rest gets out.
  try {
    const more = await store.countUnread(agent);
    const rest = more > 0 ? await freshUnread(store, agent) : [];
    const list = restList(rest, left - 1);
    if (list.text !== "") {
      const claimed = new Set(await store.announce(agent, events("stop-hook", target.pane, list.shown)));
      if (claimed.size > 0)
        write(
          `\n${
            restList(
              rest.filter((message) => claimed.has(message.id)),
              left - 1,
            ).text
          }`,
        );
    }
    for (const [mailbox, group] of byMailbox(shown)) await store.recordDelivery(mailbox, events("stop-hook", target.pane, group));
    return shown.length + list.shown.size;
  } catch {
    return shown.length;
  }
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
 * Cheap without mail: one count from the mailbox's cursor. Returns how many messages the text carries.
 */
export async function toolHookMail(target: HookTarget, write: (text: string) => void): Promise<number> {
  const { store, agent, budget } = target;
  target.confirm();
  const unread = await store.countUnread(agent);
  if (unread === 0) return 0;
  const announced = await store.announced(agent);
  if (unread <= announced.size) return 0;
  const fresh = byUrgency((await store.unread(agent)).filter((message) => !announced.has(message.id)));
  if (fresh.length === 0) return 0;
  const composed = composeMail(fresh, budget);
  const claimed = new Set(await store.announce(agent, events("tool-hook", target.pane, composed.shown)));
  if (claimed.size === 0) return 0;
  // Another arrival claimed some meanwhile: the text carries only what this one claimed.
  const mine =
    claimed.size === composed.shown.size
      ? composed
      : composeMail(
          fresh.filter((message) => claimed.has(message.id)),
          budget,
        );
  write(`You got new mail\n${mine.text}`);
  for (const [id, kind] of mine.shown) if (kind === "whole" || kind === "cut") await store.markRead(agent, id);
  return mine.shown.size;
}
