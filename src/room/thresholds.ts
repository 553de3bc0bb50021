/**
 * When the room calls something a problem, or a question left unanswered: durations the person may set in their
 * environment (a duration: `90s`, `20m`, `2h`; a bare number is seconds).
 *
 *   AGENTMAIL_STALLED_AFTER     an agent that is ready or working, with unread mail this old and nothing read since,
 *                               is stalled (default 15m)
 *   AGENTMAIL_UNANSWERED_AFTER  a message that needs a response, unanswered this long, needs the person (default 30m)
 */
import { parseDuration } from "../mail/durations.ts";

type Env = Record<string, string | undefined>;

export interface Thresholds {
  stalledMs: number;
  unansweredMs: number;
}

export const DEFAULT_THRESHOLDS: Thresholds = { stalledMs: 15 * 60_000, unansweredMs: 30 * 60_000 };

const MAX_MS = 30 * 86_400_000;

/** The thresholds the environment sets; a value that is no duration is refused, naming the variable. */
export function thresholdsOf(env: Env): Thresholds {
  const read = (name: string, fallback: number) => {
    const given = env[name]?.trim();
    return given ? parseDuration(given, name, MAX_MS) : fallback;
  };
  return {
    stalledMs: read("AGENTMAIL_STALLED_AFTER", DEFAULT_THRESHOLDS.stalledMs),
    unansweredMs: read("AGENTMAIL_UNANSWERED_AFTER", DEFAULT_THRESHOLDS.unansweredMs),
  };
}
