/**
 * `claim`, `release` and `claims` (CLI and MCP): the calling agent claims paths of the repository, releases them, and
 * lists who holds what. The decisions are src/claims/claims.ts, run atomically by the store; this file judges which
 * holders are gone (identity/presence.ts), waits, and sends the mail a conflict or a release calls for (claim-notices.ts).
 */
import {
  conflictsOf,
  decideClaim,
  decideDrop,
  decideRelease,
  decideRenew,
  decideSweep,
  describeClaim,
  distinctClaims,
  listBounded,
  sweep,
  type ClaimsSnapshot,
  type FileClaim,
  type HolderPlace,
  type Judge,
  type Swept,
} from "../claims/claims.ts";
import { claimPath } from "./claim-paths.ts";
import { errorWithNextStep, AgentmailError } from "../mail/errors.ts";
import { newId } from "../mail/ids.ts";
import { createMessage } from "../mail/message.ts";
import { displayName } from "../mail/names.ts";
import { HOSTNAME } from "../store/durable/process-identity.ts";
import type { Store } from "../store/store.ts";
import { type CallerContext, storeAt, whoIsCalling } from "../identity/caller.ts";
import { type Invocation, tmuxServerOf } from "../identity/invocation.ts";
import { judgeHolders } from "../identity/presence.ts";
import { tellConflicts, tellFreed } from "./claim-notices.ts";

/**
 * What the arguments of `claim`, `release` and `claims` mean, for their --help and the claim, release and claims
 * tools' schemas. Each interface adds only how it is given: a duration's forms or seconds, its default, an array.
 */
export const CLAIM_ARGUMENTS = {
  paths: "Paths or globs, relative to the working directory as git takes them: * and ? within a segment, ** across segments",
  shared: "A shared claim: others may claim the paths shared too, but not exclusively",
  reason: "Why you claim them (one line), shown to whoever runs into the claim",
  ttl: "How long the claim lasts",
  wait: "When another agent holds a path, wait for it this long at most instead of failing",
  renew: "Give your claims on the paths (all of them if none is given) their time to live again, from now",
  released: "The paths or globs as you claimed them; leave out to release every claim of yours",
  mine: "Only your own claims",
} as const;

export interface ClaimOptions {
  paths: readonly string[];
  shared: boolean;
  reason?: string;
  ttlMs: number;
  /** Wait at most this long for the claims in the way to go (null: as long as it takes); undefined: refuse at once. */
  waitMs?: number | null;
  /** Renew the caller's claims on `paths` (all of them when none is given) instead of claiming. */
  renew?: boolean;
  signal?: AbortSignal;
}

export interface ClaimResult {
  holder: string;
  claims: FileClaim[];
  now: number;
  /** Mail that could not be stored (the claims were changed all the same). */
  warnings: string[];
}

/** How often a waiting claim looks again, at most: claims are not watched, and a second is soon enough. */
const MAX_POLL_MS = 1_000;

/** Where the caller's pane is, recorded with its claims (identity/presence.ts). */
export const placeOf = (context: CallerContext): HolderPlace => ({
  host: HOSTNAME,
  server: tmuxServerOf(context.env),
  pane: context.caller.paneId,
});

/** The paths as claims are written: from the caller's working directory, through symlinks (claim-paths.ts). */
function normalizedPaths(paths: readonly string[], context: CallerContext, cwd: string): string[] {
  return paths.map((path) => claimPath(path, cwd, context.workTree));
}

/** The claims in the way of `paths` that count: run out ones dropped, and those whose holder is judged gone. */
async function standing(store: Store, snapshot: ClaimsSnapshot, asker: string, paths: readonly string[], shared: boolean): Promise<Judge> {
  const timely = sweep(snapshot).live;
  const inTheWay = conflictsOf(timely, asker, paths, shared).map((conflict) => conflict.held);
  return inTheWay.length === 0 ? () => null : judgeHolders(store, inTheWay, snapshot.now);
}

/** The refusal: who holds what, until when, and what to do; a long list is cut at MAX_LISTED, the rest counted. */
export function claimedError(conflicts: readonly { asked: string; held: FileClaim }[], now: number, waitedMs?: number): AgentmailError {
  const asked = listBounded([...new Set(conflicts.map((conflict) => displayName(conflict.asked)))], ", ", (more) => `${more} more paths`);
  const held = distinctClaims(conflicts.map((conflict) => conflict.held));
  const holders = listBounded([...new Set(held.map((claim) => displayName(claim.holder)))], ", ", (more) => `${more} more agents`);
  const claims = listBounded(
    held.map((claim) => describeClaim(claim, now)),
    "; ",
    (more) => `and ${more} more claims ('agentmail claims' lists them)`,
  );
  const waited = waitedMs === undefined ? "" : `still, after waiting ${Math.round(waitedMs / 1000)} s, `;
  const reason = `${asked} is ${waited}claimed by ${holders}: ${claims}; ${holders} was told you asked`;
  return errorWithNextStep("claimed", reason, "askHolderOrWait");
}

const sleep = (ms: number, signal?: AbortSignal) =>
  new Promise<void>((done) => {
    const timer = setTimeout(done, ms);
    const stop = () => {
      clearTimeout(timer);
      done();
    };
    signal?.addEventListener("abort", stop, { once: true });
  });

/** Claims (or renews) paths for the caller; see ClaimOptions. All or none: one path in the way refuses them all. */
export async function claimPaths(invocation: Invocation, options: ClaimOptions): Promise<ClaimResult> {
  const context = await whoIsCalling(invocation, "mail");
  const { store, caller } = context;
  const holder = caller.name;
  const paths = normalizedPaths(options.paths, context, invocation.cwd);
  if (options.renew) {
    const renewed = await store.updateFileClaims((snapshot) =>
      decideRenew(snapshot, holder, paths.length > 0 ? paths : null, options.ttlMs, placeOf(context)),
    );
    return { holder, claims: renewed, now: Date.parse(renewed[0]!.active_at), warnings: [] };
  }
  if (paths.length === 0)
    throw new AgentmailError("usage", "give the paths or globs to claim, relative to this directory as git takes them");
  const request = { holder, paths, shared: options.shared, reason: options.reason, ttlMs: options.ttlMs, place: placeOf(context) };
  const started = Date.now();
  let pause = 100;
  const warnings: string[] = [];
  for (;;) {
    const judge = await standing(store, await store.fileClaims(), holder, paths, options.shared);
    let now = 0;
    const outcome = await store.updateFileClaims((snapshot) => {
      now = snapshot.now;
      return decideClaim(snapshot, request, judge, newId);
    });
    warnings.push(...(await tellFreed(store, [], outcome.swept, null)));
    if ("granted" in outcome) return { holder, claims: outcome.granted, now, warnings };
    warnings.push(...(await tellConflicts(store, holder, outcome.news, now, "claim")));
    const waited = Date.now() - started;
    const left = options.waitMs === null ? Number.POSITIVE_INFINITY : (options.waitMs ?? 0) - waited;
    if (options.waitMs === undefined || left <= 0 || options.signal?.aborted) {
      throw claimedError(outcome.conflicts, now, options.waitMs === undefined ? undefined : waited);
    }
    await sleep(Math.min(pause, left), options.signal);
    pause = Math.min(pause * 2, MAX_POLL_MS);
  }
}

export interface ReleaseResult {
  holder: string;
  released: FileClaim[];
  warnings: string[];
}

/** Releases the caller's claims on `paths`, its automatic ones (`auto`), or all; tells their waiters. */
export async function releasePaths(invocation: Invocation, paths: readonly string[], auto = false): Promise<ReleaseResult> {
  const context = await whoIsCalling(invocation, "mail");
  const { store, caller } = context;
  const named = normalizedPaths(paths, context, invocation.cwd);
  const outcome = await store.updateFileClaims((snapshot) => decideRelease(snapshot, caller.name, { paths: named, auto }));
  const warnings = await tellFreed(store, outcome.released, outcome.swept, caller.name);
  return { holder: caller.name, released: outcome.released, warnings };
}

/** A stored claim and whether it counts: `live`, or `ended` with why (run out, holder offline, window closed). */
export interface ClaimListing extends FileClaim {
  state: "live" | "ended";
  why?: string;
}

/** Every stored claim (or the caller's, `mine`), by path, each judged: live, or ended and why. */
export async function listClaims(
  invocation: Invocation,
  mine: boolean,
): Promise<{ you: string | null; now: number; claims: ClaimListing[] }> {
  const context = mine ? await whoIsCalling(invocation, "mail") : null;
  const store = context?.store ?? (await storeAt(invocation));
  const judged = await judgedClaims(store, (claim) => context === null || claim.holder === context.caller.name);
  return { you: context?.caller.name ?? null, ...judged };
}

/** The store's claims that `keep` keeps (all by default), by path then holder, each judged: live, or ended and why. */
export async function judgedClaims(
  store: Store,
  keep: (claim: FileClaim) => boolean = () => true,
): Promise<{ now: number; claims: ClaimListing[] }> {
  const snapshot = await store.fileClaims();
  const chosen = snapshot.claims.filter(keep);
  const judge = await judgeHolders(store, chosen, snapshot.now);
  const claims = chosen
    .map((claim): ClaimListing => {
      const [ended] = sweep({ claims: [claim], now: snapshot.now }, judge).swept;
      return ended ? { ...claim, state: "ended", why: ended.why } : { ...claim, state: "live" };
    })
    .sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : a.holder < b.holder ? -1 : a.holder > b.holder ? 1 : 0));
  return { now: snapshot.now, claims };
}

/**
 * The person who runs the agents releases a claim whose holder is gone (offline, or its window closed), from the
 * mail room: the claim goes, its holder is told by mail from the person (the record of who released it), and its
 * waiters that the path is free. Refused while the holder may be alive: then it is theirs to release.
 */
export async function releaseGoneClaim(store: Store, person: string, id: string): Promise<{ released: FileClaim; warnings: string[] }> {
  const { claims } = await judgedClaims(store, (claim) => claim.id === id);
  const claim = claims[0];
  if (!claim) throw new AgentmailError("not_found", `no claim ${displayName(id)} is stored (released or swept already)`);
  if (claim.state === "live" || claim.why === "expired") {
    const why = claim.state === "live" ? `${displayName(claim.holder)} is not gone` : "it ran out: the next claim or cleanup sweeps it";
    throw new AgentmailError(
      "usage",
      `the claim of ${displayName(claim.holder)} on ${displayName(claim.path)} is not yours to release: ${why}; ask them: agentmail send ${displayName(claim.holder)} "…"`,
    );
  }
  const released = await store.updateFileClaims((snapshot) => decideDrop(snapshot, id));
  if (released === null) throw new AgentmailError("not_found", `no claim ${displayName(id)} is stored (released or swept already)`);
  const body =
    `${person} released your claim on ${released.path} from the mail room: ${claim.why}. ` +
    `Claim it again when you are back, if you still need it (agentmail claim ${released.path}).`;
  const warnings: string[] = [];
  try {
    await store.append(
      createMessage(person, released.holder, body, new Date(), {
        subject: `claim released: ${released.path}`,
        type: "status",
        tags: ["claims"],
      }),
    );
  } catch (error) {
    warnings.push(`could not tell ${released.holder} by mail (${(error as Error).message})`);
  }
  warnings.push(...(await tellFreed(store, [], [{ claim: released, why: `released by ${person}: ${claim.why}` }], person)));
  return { released, warnings };
}

/** The claims that no longer count (run out, holder gone), removed unless `dryRun`, their waiters told. For cleanup. */
export async function sweepClaims(store: Store, dryRun: boolean): Promise<{ swept: Swept[]; warnings: string[] }> {
  const snapshot = await store.fileClaims();
  if (snapshot.claims.length === 0) return { swept: [], warnings: [] };
  const judge = await judgeHolders(store, snapshot.claims, snapshot.now);
  const swept = await store.updateFileClaims((current) => decideSweep(current, judge, dryRun));
  return { swept, warnings: dryRun ? [] : await tellFreed(store, [], swept, null) };
}
