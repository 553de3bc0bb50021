/** Durations as people type them: `90` or `90s`, `30m`, `2h`, `1d`. */
import { AgentmailError } from "./errors.ts";
import { displayName } from "./names.ts";

const UNITS: Record<string, number> = { s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000 };

/** A duration in ms, from 1 second to `maxMs`; refused naming `flag` and the forms it takes. */
export function parseDuration(given: string, flag: string, maxMs: number): number {
  const match = /^\s*(\d+(?:\.\d+)?)\s*([smhd]?)\s*$/i.exec(given);
  const ms = match ? Number(match[1]) * UNITS[(match[2] || "s").toLowerCase()]! : Number.NaN;
  if (!(ms >= 1_000 && ms <= maxMs)) {
    const most = maxMs % UNITS.d! === 0 ? `${maxMs / UNITS.d!}d` : `${maxMs / 1000}s`;
    throw new AgentmailError(
      "usage",
      `${flag} takes a duration from 1s to ${most} (90s, 30m, 2h, 1d; a bare number is seconds), not '${displayName(given)}'`,
    );
  }
  return Math.round(ms);
}
