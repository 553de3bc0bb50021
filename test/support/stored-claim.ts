/** A claim as the store keeps it, for the tests of what is made of claims (notices, refusals). */
import type { FileClaim } from "../../src/claims/claims.ts";

/** The time the claims below are judged at: an hour into `storedClaim`'s two, one left. */
export const CLAIMS_NOW = Date.parse("2026-05-01T10:00:00.000Z");

/** `holder`'s exclusive claim on `path`, held from 09:00 to 11:00 on 2026-05-01, no waiters; `extra` changes any field. */
export function storedClaim(holder: string, path: string, extra: Partial<FileClaim> = {}): FileClaim {
  return {
    id: `${holder}:${path}`,
    path,
    holder,
    shared: false,
    claimed_at: "2026-05-01T09:00:00.000Z",
    expires_at: "2026-05-01T11:00:00.000Z",
    active_at: "2026-05-01T09:00:00.000Z",
    host: "h",
    server: null,
    pane: "%1",
    waiters: [],
    ...extra,
  };
}
