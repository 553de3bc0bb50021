/**
 * The token budget across arrivals (pure). One arrival (a frame, a hook's output) carries at most N messages and K
 * characters (frame.ts); but a burst arrives over seconds, and each arrival that showed five messages whole made the
 * next turn, and the next arrival showed five more. So the budget spans a window per agent: it opens with the first
 * arrival that shows mail, lasts `budget.windowMs` (60 s), and in it all arrivals together show at most N messages
 * whole (or cut) and K characters of text. What does not fit is listed by subject and counted, announced, and left
 * for `agentmail receive`; once the characters are spent, an arrival says little more than how many came (frame.ts).
 *
 * An arrival that has nothing to show whole, only a list (the window's messages are spent), waits until the mail
 * stops coming for QUIET_MS, and at the latest until the window closes: a burst is listed once, after it, rather than
 * one list per frame or turn as it comes. The mail it waits with is unannounced; the arrival that goes lists it.
 */
import type { Allowance, Budget } from "./frame.ts";

export interface ArrivalWindow {
  /** When it opened: the arrival that first showed mail in it (ms since the epoch). */
  since: number;
  /** Messages shown whole or cut in it. */
  shown: number;
  /** The characters of all the text its arrivals put in front of the model (as shown: escapes and quote marks counted). */
  chars: number;
}

/** How long no new mail must have come before an arrival with only a list goes. */
export const QUIET_MS = 2_000;

const isOpen = (window: ArrivalWindow | null, budget: Budget, now: number): window is ArrivalWindow =>
  window !== null && now >= window.since && now - window.since < budget.windowMs;

/** What an arrival at `now` may show whole, given the agent's window. */
export function allowanceOf(window: ArrivalWindow | null, budget: Budget, now: number): Allowance {
  if (!isOpen(window, budget, now)) return { messages: budget.messages, chars: budget.chars, opens: true };
  return { messages: Math.max(0, budget.messages - window.shown), chars: Math.max(0, budget.chars - window.chars), opens: false };
}

/**
 * When an arrival that would only list mail may go (ms since the epoch), or null for now: QUIET_MS after `newest`
 * (when the newest of that mail was sent), at the latest when the window closes.
 */
export function listDue(window: ArrivalWindow | null, budget: Budget, newest: number, now: number): number | null {
  if (!isOpen(window, budget, now)) return null;
  const due = Math.min(newest + QUIET_MS, window.since + budget.windowMs);
  return due > now ? due : null;
}

/** The window after an arrival at `now` that showed `shown` messages whole or cut, in a text of `chars` characters. */
export function windowAfter(window: ArrivalWindow | null, budget: Budget, now: number, shown: number, chars: number): ArrivalWindow | null {
  if (isOpen(window, budget, now)) return { since: window.since, shown: window.shown + shown, chars: window.chars + chars };
  return shown > 0 ? { since: now, shown, chars } : window;
}

/** The newest creation time among `messages` (ms since the epoch); 0 when none has one. */
export function newestOf(messages: readonly { created_at?: unknown }[]): number {
  let newest = 0;
  for (const message of messages) {
    const at = Date.parse(String(message.created_at));
    if (Number.isFinite(at) && at > newest) newest = at;
  }
  return newest;
}

/** A window read back from its file, or null for anything that is not one. */
export function parseWindow(text: string): ArrivalWindow | null {
  try {
    const value = JSON.parse(text) as Partial<ArrivalWindow>;
    const { since, shown, chars } = value ?? {};
    if ([since, shown, chars].every((number) => typeof number === "number" && Number.isFinite(number))) {
      return { since: since!, shown: shown!, chars: chars! };
    }
  } catch {
    // Not a window.
  }
  return null;
}
