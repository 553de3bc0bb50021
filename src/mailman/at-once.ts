/**
 * `send` delivers at once where it can: along a route the mailman verified for the recipient (store/local/routes-file.ts),
 * whose process still runs, when no frame went to that agent within FRAME_PACE_MS (a burst is left to the mailman,
 * which puts it in one frame). Bounded in time, so a slow channel never holds up the send's exit: what this does not
 * deliver, the mailman does at its next sweep. Without receipts (they go only to a process that stays to listen), a
 * Claude Code frame counts as read once sent: the mailman only verifies routes of sessions that did not hold its mail.
 */
import type { Message } from "../mail/message.ts";
import type { Route } from "../mail/route.ts";
import { lastFramed, noteFramed, type KnownRoute } from "../store/local/routes-file.ts";
import type { Store } from "../store/store.ts";
import { sessionAlive } from "./claude-inbox.ts";
import { deliverAlong, markShownRead } from "./deliver.ts";
import { budgetOf, FRAME_PACE_MS } from "../mail/frame.ts";
/** The most a send waits on one channel before leaving the mail to the mailman. */
const CHANNEL_TIMEOUT_MS = 1_000;

const live = (route: Route) => sessionAlive(route.pid, route.procStart);

/** Frames each copy whose recipient has a usable route; says nothing, fails nothing. */
export async function deliverAtOnce(
  store: Store,
  root: string,
  copies: readonly Message[],
  routes: Record<string, KnownRoute>,
  env: Record<string, string | undefined>,
): Promise<void> {
  const budget = budgetOf(env);
  for (const copy of copies) {
    const known = routes[copy.to];
    if (!known || known.holds || !live(known.route)) continue;
    if (lastFramed(root, copy.to) + FRAME_PACE_MS > Date.now()) continue;
    try {
      const delivered = await deliverAlong({
        store,
        root,
        agent: copy.to,
        route: known.route,
        messages: [copy],
        budget,
        timeoutMs: CHANNEL_TIMEOUT_MS,
      });
      if (delivered.channel === null) continue;
      noteFramed(root, copy.to);
      if (delivered.channel === "claude-inbox") await markShownRead(store, delivered.carried);
    } catch {
      // The mailman delivers it.
    }
  }
}
