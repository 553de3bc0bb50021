/**
 * The mailman's native deliveries: fresh mail framed along an agent CLI's own channel (mailman/adapters.ts), Claude Code's
 * receipts turned into the messages' delivery state, and the routes that worked kept for `send`.
 *
 * Claude Code answers nothing when it accepts a frame; it sends a receipt only when it did not put it before the
 * model (held, dropped, refused, expired) and, for a held one, later (delivered, denied). So the mailman listens for
 * receipts on a socket of its own beside the session's, and marks the frame's messages read only once RECEIPT_GRACE_MS
 * passed without a bad one (drop receipts come up to 5 s late); a held frame's messages are marked read when its
 * user approves it.
 */
import type { ArrivalEvent, DeliveryEvent } from "../mail/arrival.ts";
import type { Route } from "../mail/route.ts";
import { displayName } from "../mail/names.ts";
import { ReceiptListener, type Receipt } from "./claude-inbox.ts";
import { deliverAlong, markShownRead, type Delivered } from "./deliver.ts";
import type { Budget } from "../mail/frame.ts";
import type { Message } from "../mail/message.ts";
import { noteFramed, readRoutes, writeRoutes, type KnownRoute } from "../store/local/routes-file.ts";
import type { Store } from "../store/store.ts";

/** How long after a frame to Claude Code a bad receipt may still come (drop receipts were seen up to 5 s late). */
export const RECEIPT_GRACE_MS = 6_000;

/** What the user of a bypass-permissions session (or one set to hold) does to let agentmail's mail in. */
export const HOLD_ADVICE =
  'Claude Code holds it for its user\'s approval (a bypass-permissions session, or crossSessionInbound "hold"); to let ' +
  'agentmail mail in, set "crossSessionInbound": "accept" in that session\'s settings (~/.claude/settings.json)';

/** A frame sent to a Claude Code session, waiting for its receipts. */
interface Pending {
  agent: string;
  route: Route;
  /** What it carried: known once the frame is out (null until then). */
  carried: Delivered["carried"] | null;
  /** Receipts that came before the frame's send returned (a session may answer at once): applied then. */
  early: Receipt[];
  sentAt: number;
  held: boolean;
}

/** What a receipt says, as the delivery record's event and its reason. */
function eventOf(receipt: Receipt): { event: ArrivalEvent; reason?: string } | null {
  switch (receipt.status) {
    case "held":
      return { event: "held", reason: HOLD_ADVICE };
    case "delivered":
      return { event: "delivered" };
    case "denied":
      return { event: "denied", reason: "its user declined it in Claude Code's dialog" };
    case "dropped":
      return { event: "dropped", reason: `Claude Code's inbox dropped it (${receipt.drop_reason ?? "no reason given"}); it is sent again` };
    case "expired":
      return receipt.status_detail === "refused"
        ? { event: "refused", reason: 'Claude Code refuses mail from other sessions (crossSessionInbound "refuse"); its hooks bring it' }
        : { event: "expired", reason: "the Claude Code session ended while holding it; its next session's hooks bring it" };
    default:
      return null;
  }
}

export interface NativeOptions {
  store: Store;
  root: string;
  budget: Budget;
  log: (line: string) => void;
  /** Tells the mailman what became of an agent's frame (its state file and `mailman status`). */
  report: (agent: string, outcome: "notified" | "held" | "waiting", detail: string) => void;
}

export class NativeDeliveries {
  readonly #options: NativeOptions;
  /** Receipt sockets, by the directory of the sessions' sockets they serve. */
  readonly #listeners = new Map<string, Promise<ReceiptListener | null>>();
  readonly #pending = new Map<string, Pending>();
  readonly #routes: Record<string, KnownRoute>;
  /** Sessions that refuse mail from other sessions (by socket): their agents' mail is left to their hooks. */
  readonly #refusing = new Set<string>();

  constructor(options: NativeOptions) {
    this.#options = options;
    this.#routes = readRoutes(options.root);
  }

  /** Why a route must not be used (its session refuses mail from other sessions), or null. */
  refusal(route: Route): string | null {
    if (route.channel !== "claude-inbox" || !this.#refusing.has(route.socket)) return null;
    return `the Claude Code session in pane ${route.pane} refuses mail from other sessions (crossSessionInbound "refuse"); its hooks bring it`;
  }

  /**
   * Frames `fresh` (urgent first) to `agent` along `route`; returns what was sent, for the caller's log and state,
   * and whether a receipt already said the session holds it.
   */
  async deliver(agent: string, route: Route, fresh: readonly Message[]): Promise<Delivered & { held: boolean }> {
    const { store, budget, root } = this.#options;
    let receipts: { from: string; msgId: string } | undefined;
    if (route.channel === "claude-inbox") {
      const listener = await this.#listenerFor(route.socket);
      if (listener) receipts = { from: listener.path, msgId: crypto.randomUUID() };
    }
    const pending: Pending = { agent, route, carried: null, early: [], sentAt: Date.now(), held: false };
    if (receipts) this.#pending.set(receipts.msgId, pending);
    const delivered = await deliverAlong({ store, root, agent, route, messages: fresh, budget, receipts });
    if (delivered.channel === null) {
      if (receipts) this.#pending.delete(receipts.msgId);
      return { ...delivered, held: false };
    }
    noteFramed(root, agent);
    if (route.channel === "claude-inbox" && receipts) {
      pending.carried = delivered.carried;
      pending.sentAt = Date.now();
      for (const receipt of pending.early.splice(0)) await this.#onReceipt(receipt);
    } else if (route.channel === "claude-inbox") {
      // No receipt socket could be opened: nothing bad can be heard, so what was shown counts as read now.
      await markShownRead(store, delivered.carried);
    } else this.#verified(agent, route, false);
    return { ...delivered, held: pending.held };
  }

  /** Keeps only the routes `keep` accepts (the mailman checks those an earlier one left); the rest are forgotten. */
  keepRoutes(keep: (agent: string, route: Route) => boolean): void {
    const before = Object.keys(this.#routes).length;
    for (const [agent, known] of Object.entries(this.#routes)) if (!known?.route || !keep(agent, known.route)) delete this.#routes[agent];
    if (Object.keys(this.#routes).length !== before) this.#saveRoutes();
  }

  /** A route found not to work any more is forgotten, so `send` does not use it. */
  forget(agent: string): void {
    if (!(agent in this.#routes)) return;
    delete this.#routes[agent];
    this.#saveRoutes();
  }

  #verified(agent: string, route: Route, holds: boolean): void {
    this.#routes[agent] = { route, verified_at: new Date().toISOString(), holds };
    this.#saveRoutes();
  }

  #saveRoutes(): void {
    try {
      writeRoutes(this.#options.root, this.#routes);
    } catch (error) {
      this.#options.log(`cannot write the routes for send: ${(error as Error).message}`);
    }
  }

  #listenerFor(socket: string): Promise<ReceiptListener | null> {
    const dir = socket.slice(0, socket.lastIndexOf("/"));
    let listener = this.#listeners.get(dir);
    if (!listener) {
      listener = ReceiptListener.open(socket, (receipt) => void this.#onReceipt(receipt)).catch((error) => {
        this.#options.log(
          `cannot listen for Claude Code's receipts in ${dir} (${(error as Error).message}); frames there count as read at once`,
        );
        return null;
      });
      this.#listeners.set(dir, listener);
    }
    return listener;
  }

  async #onReceipt(receipt: Receipt): Promise<void> {
    const meaning = eventOf(receipt);
    if (meaning === null) return;
    const ids = receipt.dropped_msg_ids ?? (receipt.orig_msg_id ? [receipt.orig_msg_id] : []);
    for (const msgId of ids) {
      const pending = this.#pending.get(msgId);
      if (!pending) continue;
      if (pending.carried === null) {
        pending.early.push(receipt);
        continue;
      }
      try {
        await this.#apply(pending, msgId, meaning);
      } catch (error) {
        this.#options.log(`cannot record Claude Code's receipt for ${displayName(pending.agent)}: ${(error as Error).message}`);
      }
    }
  }

  async #apply(pending: Pending, msgId: string, meaning: { event: ArrivalEvent; reason?: string }): Promise<void> {
    const { store, log, report } = this.#options;
    const carried = pending.carried ?? [];
    const at = new Date().toISOString();
    const byMailbox = new Map<string, DeliveryEvent[]>();
    for (const { id, mailbox } of carried) {
      const event: DeliveryEvent = { id, event: meaning.event, at, channel: "claude-inbox", pane: pending.route.pane };
      if (meaning.reason) event.reason = meaning.reason;
      byMailbox.set(mailbox, [...(byMailbox.get(mailbox) ?? []), event]);
    }
    for (const [mailbox, events] of byMailbox) await store.recordDelivery(mailbox, events);
    const name = `"${displayName(pending.agent)}"`;
    const count = `${carried.length} message${carried.length === 1 ? "" : "s"}`;
    if (meaning.event === "held") {
      pending.held = true;
      this.#verified(pending.agent, pending.route, true);
      report(pending.agent, "held", `${count} held in pane ${pending.route.pane}: ${HOLD_ADVICE}`);
      log(`mail for ${name} held: ${HOLD_ADVICE}`);
      return;
    }
    this.#pending.delete(msgId);
    if (meaning.event === "delivered") {
      await markShownRead(store, carried);
      report(pending.agent, "notified", `${count} approved by its user in pane ${pending.route.pane}`);
      return;
    }
    report(pending.agent, "waiting", `${count} ${meaning.event}: ${meaning.reason}`);
    log(`mail for ${name} ${meaning.event}: ${meaning.reason}`);
    if (meaning.event === "refused" && pending.route.channel === "claude-inbox") this.#refusing.add(pending.route.socket);
    if (meaning.event === "refused" || meaning.event === "expired") this.forget(pending.agent);
  }

  /**
   * Marks read what Claude Code sessions took without a bad receipt in time, and notes those routes as verified.
   * Returns when the next frame's time is up (ms since the epoch), or null when none waits.
   */
  async settle(now = Date.now()): Promise<number | null> {
    let next: number | null = null;
    for (const [msgId, pending] of this.#pending) {
      if (pending.held || pending.carried === null) continue;
      const due = pending.sentAt + RECEIPT_GRACE_MS;
      if (due > now) {
        next = next === null ? due : Math.min(next, due);
        continue;
      }
      this.#pending.delete(msgId);
      await markShownRead(this.#options.store, pending.carried);
      this.#verified(pending.agent, pending.route, false);
    }
    return next;
  }

  async close(): Promise<void> {
    for (const listener of this.#listeners.values()) (await listener)?.close();
    this.#listeners.clear();
  }
}
