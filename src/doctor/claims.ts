/**
 * The claims on paths: how many count, and those that ended (run out, holder gone) but are still stored. An ended
 * claim stops nobody (every check passes over it); `cleanup` removes it and tells whoever waited for it.
 */
import { judgeHolders } from "../identity/presence.ts";
import { sweep } from "../claims/claims.ts";
import { terminalLine } from "../mail/terminal-text.ts";
import type { Store } from "../store/store.ts";
import { note, ok, problem, type Finding } from "./finding.ts";

export async function claimFindings(store: Store | null): Promise<Finding[]> {
  if (store === null) return [];
  let snapshot: Awaited<ReturnType<Store["fileClaims"]>>;
  try {
    snapshot = await store.fileClaims();
  } catch (error) {
    return [problem("claims", terminalLine(error instanceof Error ? error.message : String(error)), null)];
  }
  if (snapshot.claims.length === 0) return [];
  const { live, swept } = sweep(snapshot, await judgeHolders(store, snapshot.claims, snapshot.now));
  const holders = new Set(live.map((claim) => claim.holder)).size;
  const findings: Finding[] = [ok("claims", `${live.length} live claims on paths, held by ${holders} agents`)];
  for (const { claim, why } of swept) {
    const what = why === "expired" ? "ran out" : `ended: ${why}`;
    findings.push(
      note(
        "claims",
        `the claim on ${terminalLine(claim.path)} of ${terminalLine(claim.holder)} ${what}, and is still stored; it stops nobody`,
        "agentmail cleanup",
      ),
    );
  }
  return findings;
}
