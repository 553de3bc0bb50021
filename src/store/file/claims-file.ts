/**
 * Claims on paths in the file store: one small JSON document, `<root>/.claims.json` (a name starting with a dot, out
 * of the mailbox namespace), changed only under its lock and replaced atomically. A reader (the pre-edit guard, on
 * every edit) needs no lock: it sees the old or the new document. Two concurrent claims of one path are serialized
 * by the lock, so exactly one is granted; a holder killed mid-change leaves the lock to be broken (lock.ts) and the
 * document whole.
 */
import { closeSync } from "node:fs";
import { join } from "node:path";
import { parseClaims, serializeClaims, type ClaimsChange, type ClaimsSnapshot, type FileClaim } from "../../claims/claims.ts";
import { AgentmailError } from "../../mail/errors.ts";
import { openForRead, readRange, replaceFile } from "../durable/files.ts";
import { CLAIMS_FILE } from "../local/layout.ts";
import { withLock } from "../durable/lock.ts";
import { ensureRoot } from "../paths.ts";

export const claimsPath = (root: string) => join(root, CLAIMS_FILE);

function unreadable(path: string): AgentmailError {
  return new AgentmailError(
    "io",
    `${path} is not a claims document; fix it, or remove it to drop every claim (agentmail will then write a new one)`,
  );
}

/** The stored claims; none when there is no document. */
export function readFileClaims(root: string): FileClaim[] {
  const path = claimsPath(root);
  const file = openForRead(path);
  if (!file) return [];
  let text: string;
  try {
    text = new TextDecoder().decode(readRange(file.fd, 0, file.stat.size));
  } finally {
    closeSync(file.fd);
  }
  const claims = parseClaims(text);
  if (claims === null) throw unreadable(path);
  return claims;
}

export function fileClaimsSnapshot(root: string): ClaimsSnapshot {
  return { claims: readFileClaims(root), now: Date.now() };
}

/** Runs `change` on the claims under the claims lock and stores what it returns; see Store.updateFileClaims. */
export async function updateFileClaims<T>(root: string, change: (snapshot: ClaimsSnapshot) => ClaimsChange<T>): Promise<T> {
  const path = claimsPath(ensureRoot(root));
  return withLock(`${path}.lock`, () => {
    const outcome = change(fileClaimsSnapshot(root));
    if (outcome.claims !== null) replaceFile(path, serializeClaims(outcome.claims));
    return outcome.result;
  });
}
