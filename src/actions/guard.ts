/**
 * The guards: an edit an agent is about to make (its CLI's pre-edit hook) or a commit (git's pre-commit hook) is
 * checked against the claims of other agents. Nothing claimed costs one read of the claims and no tmux call; only a
 * file under another agent's exclusive claim asks who the caller is and whether that holder is still there. A shared
 * claim never stops an edit: it only keeps others from claiming the path exclusively.
 *
 * A refused edit makes the caller a waiter on the claims in its way (told by mail when they go), and tells their
 * holders once. With auto-claim, an edit let through claims its files for the caller first (exclusive, the default
 * time), unless another agent holds them shared.
 */
import { conflictsOf, decideClaim, decideWait, DEFAULT_TTL_MS, sweep, type FileClaim } from "../claims/claims.ts";
import { covers, repositoryPathOf } from "../claims/patterns.ts";
import { openStore } from "../store/open.ts";
import { repositoryFile } from "./claim-paths.ts";
import { findRepository } from "../store/paths.ts";
import type { Attempt } from "./claim-notices.ts";
import type { Invocation } from "../identity/invocation.ts";

export interface GuardRequest {
  /** The files about to change: absolute, or relative to `cwd`. */
  files: readonly string[];
  cwd: string;
  autoClaim?: boolean;
  /** What the caller is about to do, as the mail to the holders says it. */
  doing: Exclude<Attempt, "claim">;
}

/** A commit about to be made: the paths it changes, as git's index says, checked as checkEdit checks an edit. */
export async function checkCommit(invocation: Invocation): Promise<GuardVerdict> {
  const { stagedPaths } = await import("../hooks/git.ts");
  return checkEdit(invocation, { files: stagedPaths(invocation.cwd, invocation.env), cwd: invocation.cwd, doing: "commit" });
}

export type GuardVerdict = { allowed: true } | { allowed: false; files: string[]; held: FileClaim[]; now: number };

const ALLOWED: GuardVerdict = { allowed: true };

/** Who the caller is, or null when it cannot be told (outside tmux): then every claim is another agent's. */
async function callerOf(invocation: Invocation) {
  const { whoIsCalling } = await import("../identity/caller.ts");
  try {
    return await whoIsCalling(invocation, "mail");
  } catch {
    return null;
  }
}

export async function checkEdit(invocation: Invocation, request: GuardRequest): Promise<GuardVerdict> {
  const repository = findRepository(invocation.cwd, invocation.env);
  if (!repository?.workTree) return ALLOWED;
  const workTree = repository.workTree;
  const paths: string[] = [];
  // A commit's paths are git's own (a symlink it tracks is that link); an edit goes through symlinks to the file.
  const pathOf = request.doing === "commit" ? repositoryPathOf : repositoryFile;
  for (const file of request.files) {
    const path = pathOf(file, request.cwd, workTree);
    if (path !== null) paths.push(path);
  }
  if (paths.length === 0) return ALLOWED;
  const store = await openStore(invocation, repository);
  const snapshot = await store.fileClaims();
  const { live } = sweep(snapshot);
  const exclusive = live.filter((claim) => !claim.shared && paths.some((path) => covers(claim.path, path)));
  if (exclusive.length === 0 && !request.autoClaim) return ALLOWED;
  const context = await callerOf(invocation);
  const me = context?.caller.name ?? null;
  const others = exclusive.filter((claim) => claim.holder !== me);
  if (others.length > 0) {
    const { judgeHolders } = await import("../identity/presence.ts");
    const judge = await judgeHolders(store, others, snapshot.now);
    const standing = others.filter((claim) => judge(claim) === null);
    if (standing.length > 0) {
      const blocked = paths.filter((path) => standing.some((claim) => covers(claim.path, path)));
      if (me !== null) await waitOn(store, me, blocked, standing, snapshot.now, request.doing);
      return { allowed: false, files: blocked, held: standing, now: snapshot.now };
    }
  }
  if (request.autoClaim && context !== null) {
    const mine = live.filter((claim) => claim.holder === me);
    const unclaimed = paths.filter((path) => !mine.some((claim) => covers(claim.path, path)));
    // A path another agent holds shared is edited without a claim: claiming it would only refuse.
    const free = unclaimed.filter((path) => conflictsOf(live, me!, [path], false).length === 0);
    if (free.length > 0) await autoClaim(context, free);
  }
  return ALLOWED;
}

/** The refused caller waits on the claims in its way; their holders are told, once. */
async function waitOn(
  store: Awaited<ReturnType<typeof openStore>>,
  me: string,
  blocked: readonly string[],
  standing: readonly FileClaim[],
  now: number,
  doing: Attempt,
): Promise<void> {
  const { tellConflicts } = await import("./claim-notices.ts");
  const conflicts = blocked.flatMap((asked) => standing.filter((held) => covers(held.path, asked)).map((held) => ({ asked, held })));
  try {
    const news = await store.updateFileClaims((snapshot) => decideWait(snapshot, me, conflicts));
    await tellConflicts(store, me, news, now, doing);
  } catch {
    // Telling is best effort: the edit is refused all the same.
  }
}

async function autoClaim(context: Awaited<ReturnType<typeof callerOf>> & object, paths: string[]): Promise<void> {
  const [{ placeOf }, { newId }] = await Promise.all([import("./claims.ts"), import("../mail/ids.ts")]);
  const request = { holder: context.caller.name, paths, shared: false, ttlMs: DEFAULT_TTL_MS, auto: true, place: placeOf(context) };
  // Raced by another agent's claim: the edit goes ahead unclaimed, as it would without auto-claim, and waits on nothing.
  await context.store.updateFileClaims((snapshot) => {
    const change = decideClaim(snapshot, request, () => null, newId);
    return "granted" in change.result ? change : { claims: null, result: change.result };
  });
}
