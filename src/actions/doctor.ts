import { commandFindings } from "../doctor/binary.ts";
import { bridgeFindings } from "../doctor/bridges.ts";
import { claimFindings } from "../doctor/claims.ts";
import { deliveryFindings } from "../doctor/delivery.ts";
import { hookFindings } from "../doctor/hooks.ts";
import { mailmanFindings } from "../doctor/mailman.ts";
import { storeFindings } from "../doctor/store.ts";
import { tmuxFindings } from "../doctor/tmux.ts";
import type { Finding } from "../doctor/finding.ts";
import { sharedAcrossHosts } from "../store/open.ts";
import { localRoot } from "../store/paths.ts";
import { terminalLine } from "../mail/terminal-text.ts";
import type { Store } from "../store/store.ts";
import { storeAt } from "../identity/caller.ts";
import { boundaryOf } from "../identity/projects.ts";
import type { Invocation } from "../identity/invocation.ts";

/** A finding as doctor prints it: `problem hooks: …; fix: …`, nothing in it acting on the terminal. */
export const findingLine = (finding: Finding): string =>
  `${finding.status} ${finding.area}: ${terminalLine(finding.message)}${finding.fix ? `; fix: ${terminalLine(finding.fix)}` : ""}\n`;

export interface DoctorReport {
  /** Nothing wrong is left (after the repairs, with --fix). */
  ok: boolean;
  store: string | null;
  findings: Finding[];
}

/**
 * Checks the store, tmux, the mailman, how each agent's mail reaches it, the agents' hooks, the claims on paths and the
 * files the bridges left alone; with `fix`, first makes the safe repairs (stale locks,
 * stray temp files, cursors receive would not use). Every check runs, whatever the others found.
 */
export async function runDoctor(invocation: Invocation, fix: boolean): Promise<DoctorReport> {
  if (sharedAcrossHosts(invocation.env)) return sharedStoreDoctor(invocation);
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
    ...mailmanFindings(store.root, store.root),
    ...(await deliveryFindings(mail, invocation.env, await boundaryOf(invocation))),
    ...hookFindings(invocation),
    ...commandFindings(invocation),
    ...(await claimFindings(mail)),
    ...bridgeFindings(store.root),
  ];
  return { ok: !findings.some((finding) => finding.status === "problem"), store: store.root, findings };
}

/**
 * With AGENTMAIL_URL the mail is on a server: its checks (reachable, version, persistence, namespace) replace the
 * file store's, which holds no mail then. The Redis code loads only here.
 */
async function sharedStoreDoctor(invocation: Invocation): Promise<DoctorReport> {
  const { redisFindings } = await import("../doctor/redis.ts");
  const server = await redisFindings(invocation);
  let mail: Store | null = null;
  try {
    mail = await storeAt(invocation);
  } catch {
    // The server check says why it cannot be reached.
  }
  // The mailman's files stay in the local mail root (its pid and log are this host's own).
  let root: string | null = null;
  try {
    root = localRoot(invocation.cwd, invocation.env);
  } catch {
    // Outside a repository without AGENTMAIL_DIR: no local mailman to check.
  }
  const findings = [
    ...server,
    ...(await tmuxFindings(invocation, mail)),
    ...(root === null ? [] : mailmanFindings(root, mail?.label ?? null)),
    ...(await deliveryFindings(mail, invocation.env, await boundaryOf(invocation))),
    ...hookFindings(invocation),
    ...commandFindings(invocation),
    ...(await claimFindings(mail)),
    ...bridgeFindings(root),
  ];
  return { ok: !findings.some((finding) => finding.status === "problem"), store: mail?.location ?? null, findings };
}
