/** How claims are shown on the command line: one line each, in the words errors and mail use too. */
import { describeClaim } from "../claims/claims.ts";
import type { ClaimListing } from "../actions/claims.ts";
import { displayName } from "../mail/names.ts";

/** A listed claim: as describeClaim words it while it counts; `src/x (exclusive, bob, ended: its holder went offline)` once not. */
export function listingLine(claim: ClaimListing, now: number): string {
  if (claim.state === "live") return describeClaim(claim, now);
  return `${displayName(claim.path)} (${claim.shared ? "shared" : "exclusive"}, ${displayName(claim.holder)}, ended: ${claim.why})`;
}

/** Mail that could not be stored, said on stderr: the claims changed all the same. */
export async function warnAll(warnings: readonly string[]): Promise<void> {
  if (warnings.length === 0) return;
  const { log } = await import("../output/log.ts");
  for (const warning of warnings) log.warn(warning);
}
