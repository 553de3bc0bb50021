import { hookFindings } from "../doctor/hooks.ts";
import { mailmanFindings } from "../doctor/mailman.ts";
import { storeFindings } from "../doctor/store.ts";
import { tmuxFindings } from "../doctor/tmux.ts";
import type { Finding } from "../doctor/finding.ts";
import type { Store } from "../store/store.ts";
import { storeAt, type Invocation } from "./context.ts";

export interface DoctorReport {
  /** Nothing wrong is left (after the repairs, with --fix). */
  ok: boolean;
  store: string | null;
  findings: Finding[];
}

/**
 * Checks the store, tmux, the mailman and the agents' hooks; with `fix`, first makes the safe repairs (stale locks,
 * stray temp files, cursors receive would not use). Every check runs, whatever the others found.
 */
export async function runDoctor(invocation: Invocation, fix: boolean): Promise<DoctorReport> {
  const store = storeFindings(invocation, fix);
  let mail: Store | null = null;
  try {
    mail = store.root === null ? null : await storeAt(invocation);
  } catch {
    // The store check says why there is none.
  }
  const findings = [
    ...store.findings,
    ...(await tmuxFindings(invocation, mail)),
    ...mailmanFindings(store.root),
    ...hookFindings(invocation),
  ];
  return { ok: !findings.some((finding) => finding.status === "problem"), store: store.root, findings };
}
