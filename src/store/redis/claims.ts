/** Claims on paths on the Redis store: one document, read with the server's time, changed only if unchanged. */
import type { ClaimsChange, ClaimsSnapshot } from "../../claims/claims.ts";
import { AgentmailError } from "../../mail/errors.ts";
import type { Keyspace } from "./keyspace.ts";
import { READ_CLAIMS, REPLACE_CLAIMS } from "./scripts.ts";

/** How long a claims change keeps trying while other hosts' changes land before it: far beyond any real contention. */
const CLAIMS_CHANGE_MS = 10_000;

/** The claims document as stored, on the server's clock (the claims code loads only for claims, not for mail). */
async function claimsAt(space: Keyspace, document: string, now: string): Promise<ClaimsSnapshot> {
  if (document === "") return { claims: [], now: Number(now) };
  const { parseClaims } = await import("../../claims/claims.ts");
  const claims = parseClaims(document);
  if (claims === null) {
    throw new AgentmailError(
      "io",
      `the claims at ${space.location} (${space.key("claims")}) are not a claims document; delete that key to drop every claim`,
    );
  }
  return { claims, now: Number(now) };
}

export async function fileClaims(space: Keyspace): Promise<ClaimsSnapshot> {
  const [document, now] = (await space.run(READ_CLAIMS, [space.key("claims")], [])) as [string, string];
  return await claimsAt(space, document, now);
}

/**
 * Reads the claims with the server's time, decides here, and stores the result only if nobody changed the claims
 * meanwhile; otherwise decides again on what is stored now (a short random pause first, so that contenders spread).
 */
export async function updateFileClaims<T>(space: Keyspace, change: (snapshot: ClaimsSnapshot) => ClaimsChange<T>): Promise<T> {
  const key = space.key("claims");
  const { serializeClaims } = await import("../../claims/claims.ts");
  let [document, now] = (await space.run(READ_CLAIMS, [key], [])) as [string, string];
  const started = Date.now();
  for (let attempt = 0; ; attempt++) {
    const outcome = change(await claimsAt(space, document, now));
    if (outcome.claims === null) return outcome.result;
    const next = outcome.claims.length === 0 ? "" : serializeClaims(outcome.claims);
    const [replaced, current, then] = (await space.run(REPLACE_CLAIMS, [key], [document, next])) as [number, string?, string?];
    if (replaced === 1) return outcome.result;
    if (Date.now() - started > CLAIMS_CHANGE_MS) {
      throw new AgentmailError("locked", `the claims at ${space.location} kept changing for ${CLAIMS_CHANGE_MS / 1000} s; retry`);
    }
    [document, now] = [current ?? "", then ?? "0"];
    await new Promise((done) => setTimeout(done, Math.random() * Math.min(50, 2 ** attempt)));
  }
}
