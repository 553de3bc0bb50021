/**
 * Puts unread mail in front of an agent along a route (route.ts), the one way for the mailman and `send`: the frame
 * is composed within the budget (frame.ts) and what the agent's arrival window still allows (arrival-window.ts; a
 * frame that could only list mail waits for the burst to end), its messages are claimed for this arrival in their
 * mailboxes' delivery records (store.announce: no hook and no other frame shows them again), then sent; a frame that
 * fails withdraws its claim, so the mail is tried again. Codex answers at once, so what it took whole is marked read
 * here; Claude Code says nothing on acceptance, so the caller decides when (the mailman, after the time its receipts
 * take).
 */
import type { ArrivalChannel, DeliveryEvent, Shown } from "../mail/arrival.ts";
import type { Message } from "../mail/message.ts";
import type { Store } from "../store/store.ts";
import { sendToClaude } from "./claude.ts";
import { CodexControl, RpcError } from "./codex-control.ts";
import { frameText, type Allowance, type Budget } from "../mail/frame.ts";
import { allowanceOf, listDue, newestOf, windowAfter, type ArrivalWindow } from "../mail/arrival-window.ts";
import type { Route } from "../mail/route.ts";
import { readWindow, writeWindow } from "../store/local/window-file.ts";

export interface Delivery {
  store: Store;
  /** The local mail directory, where the agent's arrival window is kept (store/local/window-file.ts). */
  root: string;
  /** The agent it is for (its own mailbox; role mail carries its queue in `to`). */
  agent: string;
  route: Route;
  /** Fresh mail (no arrival announced it), in the order to show it: urgent first. */
  messages: readonly Message[];
  budget: Budget;
  /** Claude Code: a socket this process listens on for receipts, and the UUID they will carry. */
  receipts?: { from: string; msgId: string };
  /** The longest wait on the channel (each call); by default 3 s. */
  timeoutMs?: number;
}

export interface Delivered {
  /** The channel the frame went through, or null when nothing was sent. */
  channel: ArrivalChannel | null;
  /** The answer (a turn or queued id, a session), or why it failed. */
  detail: string;
  /** Each message the frame carried, how, and its mailbox. */
  carried: { id: string; mailbox: string; shown: Shown }[];
  /** The frame's text (what reached the agent CLI). */
  text: string;
  /** Nothing was sent because the frame could only list mail while a burst still comes: when it may go (ms). */
  due?: number;
}

const nothing = (detail: string): Delivered => ({ channel: null, detail, carried: [], text: "" });

/** What the agent's arrival window lets a frame show now, or when a frame that could only list mail may go. */
interface Plan {
  now: number;
  window: ArrivalWindow | null;
  allowance: Allowance;
}

function plan(delivery: Delivery): Plan | { due: number } {
  const { root, agent, budget, messages } = delivery;
  const now = Date.now();
  const window = readWindow(root, agent);
  const allowance = allowanceOf(window, budget, now);
  if (allowance.opens || frameText(agent, messages, budget, allowance).shownChars > 0) return { now, window, allowance };
  const due = listDue(window, budget, newestOf(messages), now);
  return due === null ? { now, window, allowance } : { due };
}

/** After a frame went: what it showed whole or cut counts in the agent's window. */
function count(delivery: Delivery, planned: Plan, frame: Frame): void {
  let shown = 0;
  for (const each of frame.carried) if (each.shown === "whole" || each.shown === "cut") shown++;
  writeWindow(delivery.root, delivery.agent, windowAfter(planned.window, delivery.budget, planned.now, shown, frame.text.length));
}

/** A frame claimed for an arrival: its text and what it carries. */
interface Frame {
  text: string;
  carried: Delivered["carried"];
}

function eventsFor(
  messages: readonly Message[],
  shown: Map<string, Shown>,
  channel: ArrivalChannel,
  pane: string,
): Map<string, DeliveryEvent[]> {
  const at = new Date().toISOString();
  const byMailbox = new Map<string, DeliveryEvent[]>();
  for (const message of messages) {
    const kind = shown.get(message.id);
    if (kind === undefined) continue;
    const event: DeliveryEvent = { id: message.id, event: "notified", at, channel, shown: kind, pane };
    byMailbox.set(message.to, [...(byMailbox.get(message.to) ?? []), event]);
  }
  return byMailbox;
}

/** Claims the frame's messages in each mailbox; returns the messages claimed (another arrival may have taken some). */
async function claim(store: Store, messages: readonly Message[], events: Map<string, DeliveryEvent[]>): Promise<Message[]> {
  const claimed = new Set<string>();
  for (const [mailbox, list] of events) for (const id of await store.announce(mailbox, list)) claimed.add(`${mailbox}\n${id}`);
  return messages.filter((message) => claimed.has(`${message.to}\n${message.id}`));
}

/** Records one event per carried message, in each message's mailbox. */
async function recordCarried(
  store: Store,
  carried: Delivered["carried"],
  event: Omit<DeliveryEvent, "id" | "at" | "shown"> & { shown?: true },
): Promise<void> {
  const at = new Date().toISOString();
  const byMailbox = new Map<string, DeliveryEvent[]>();
  for (const { id, mailbox, shown } of carried) {
    const { shown: keepShown, ...rest } = event;
    const entry: DeliveryEvent = { id, at, ...rest, ...(keepShown ? { shown } : {}) };
    byMailbox.set(mailbox, [...(byMailbox.get(mailbox) ?? []), entry]);
  }
  for (const [mailbox, events] of byMailbox) await store.recordDelivery(mailbox, events);
}

/** A frame that failed gives its messages back: the next sweep (or a hook) tries them again. */
const withdraw = (store: Store, carried: Delivered["carried"], reason: string) =>
  recordCarried(store, carried, { event: "failed", reason });

/** Composes for `channel`, claims, and says what the frame carries; null when another arrival took everything. */
async function claimFrame(delivery: Delivery, planned: Plan, channel: ArrivalChannel): Promise<Frame | null> {
  const { store, agent, route, budget, messages } = delivery;
  const composed = frameText(agent, messages, budget, planned.allowance);
  const claimed = await claim(store, messages, eventsFor(messages, composed.shown, channel, route.pane));
  if (claimed.length === 0) return null;
  const carry = (shown: Map<string, Shown>) =>
    claimed.map((message) => ({ id: message.id, mailbox: message.to, shown: shown.get(message.id)! }));
  if (claimed.length === composed.shown.size) return { text: composed.text, carried: carry(composed.shown) };
  // Another arrival took some meanwhile: the frame carries exactly what this one claimed, recorded as it shows them.
  const again = frameText(agent, claimed, budget, planned.allowance);
  const changed = carry(again.shown).filter(({ id, shown }) => composed.shown.get(id) !== shown);
  await recordCarried(store, changed, { event: "notified", channel, pane: route.pane, shown: true });
  return { text: again.text, carried: carry(again.shown) };
}

/** Marks read what the frame carried whole or cut: the agent has it. */
export async function markShownRead(store: Store, carried: Delivered["carried"]): Promise<void> {
  for (const { id, mailbox, shown } of carried) if (shown === "whole" || shown === "cut") await store.markRead(mailbox, id);
}

export async function deliverAlong(delivery: Delivery): Promise<Delivered> {
  const { store, route } = delivery;
  if (delivery.messages.length === 0) return nothing("no fresh mail");
  const planned = plan(delivery);
  if ("due" in planned) return { ...nothing("a burst still comes: its list waits for the end of it"), due: planned.due };
  if (route.channel === "claude-inbox") {
    const frame = await claimFrame(delivery, planned, "claude-inbox");
    if (frame === null) return nothing("another arrival took the mail");
    const sent = await sendToClaude(route, frame.text, delivery.receipts, delivery.timeoutMs);
    if (!sent.ok) {
      await withdraw(store, frame.carried, sent.reason);
      return { channel: null, detail: sent.reason, carried: [], text: "" };
    }
    count(delivery, planned, frame);
    return { channel: "claude-inbox", detail: sent.detail, carried: frame.carried, text: frame.text };
  }
  let client: CodexControl;
  try {
    client = await CodexControl.open(route.control, delivery.timeoutMs);
  } catch (error) {
    return nothing(`the Codex daemon at ${route.control} did not answer (${(error as Error).message})`);
  }
  try {
    const turnId = await client.activeTurn(route.threadId);
    const frame = await claimFrame(delivery, planned, turnId === null ? "codex-queue" : "codex-steer");
    if (frame === null) return nothing("another arrival took the mail");
    try {
      if (turnId !== null) {
        try {
          const steered = await client.steer(route.threadId, turnId, frame.text);
          count(delivery, planned, frame);
          await markShownRead(store, frame.carried);
          return {
            channel: "codex-steer",
            detail: `thread ${route.threadId}, turn ${steered.turnId}`,
            carried: frame.carried,
            text: frame.text,
          };
        } catch (error) {
          // The turn ended between the two calls ("no active turn to steer"): the mail starts the next one.
          if (!(error instanceof RpcError && error.code === -32600)) throw error;
        }
      }
      const queued = await client.queue(route.threadId, frame.text);
      count(delivery, planned, frame);
      if (turnId !== null)
        await recordCarried(store, frame.carried, { event: "notified", channel: "codex-queue", pane: route.pane, shown: true });
      await markShownRead(store, frame.carried);
      const detail = `thread ${route.threadId}, queued ${queued.queuedSubmission.id}`;
      return { channel: "codex-queue", detail, carried: frame.carried, text: frame.text };
    } catch (error) {
      const reason = `Codex did not take the mail on thread ${route.threadId} (${(error as Error).message})`;
      await withdraw(store, frame.carried, reason);
      return nothing(reason);
    }
  } catch (error) {
    return nothing(`the Codex daemon at ${route.control} failed (${(error as Error).message})`);
  } finally {
    client.close();
  }
}
