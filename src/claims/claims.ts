/**
 * Claims on paths: what an agent holds, and the decisions every change makes (claim, renew, release, and the sweep of
 * claims that no longer count). Pure: no I/O. The store keeps the list and runs a decision atomically
 * (store.updateFileClaims); the action judges beforehand which holders are gone (that needs the registry and tmux)
 * and sends the mail a decision asks for.
 *
 * Rules: an exclusive claim (the default) conflicts with any overlapping claim of another agent; a shared claim
 * conflicts only with an overlapping exclusive one. An agent never conflicts with itself. A claim counts until it is
 * released, its time runs out (`expires_at`, on the store's clock), or its holder is gone; a claim that no longer
 * counts is swept by the next change, and the agents it refused are told it is free.
 */
import { parseDuration } from "../mail/durations.ts";
import { AgentmailError } from "../mail/errors.ts";
import { displayName } from "../mail/names.ts";
import { overlaps } from "./patterns.ts";

/** Where the holder's pane is when it last claimed: to tell whether its window was closed. */
export interface HolderPlace {
  /** The machine its tmux server runs on: a socket path means something there only. */
  host: string;
  /** `$TMUX` without its session part (socket path and server pid), or null outside tmux. */
  server: string | null;
  pane: string;
}

export interface FileClaim extends HolderPlace {
  id: string;
  /** The path or glob, normalized, relative to the repository root (see patterns.ts). */
  path: string;
  holder: string;
  shared: boolean;
  reason?: string;
  /** Claimed by the pre-edit guard on the holder's first edit of the path; released when its session ends. */
  auto?: boolean;
  /** ISO 8601, on the store's clock. */
  claimed_at: string;
  expires_at: string;
  /**
   * When its holder last claimed or renewed anything: the holder was alive then, so an `offline` status set before
   * it (a session that ended before this one began) does not make the claim its holder's leftover.
   */
  active_at: string;
  /** Agents this claim refused (or that wait for it): each is told by mail when it is released. */
  waiters: string[];
}

/** The claims as stored, and the store's clock (Redis: the server's TIME) in ms. */
export interface ClaimsSnapshot {
  claims: FileClaim[];
  now: number;
}

/** What a decision does: the new list (null: unchanged) and what to report. */
export interface ClaimsChange<T> {
  claims: FileClaim[] | null;
  result: T;
}

/** Why a claim that is stored no longer counts; null while it does. The action's judgment of the holder. */
export type Judge = (claim: FileClaim) => string | null;

/** A claim that no longer counted and was removed, and why (expired, holder offline, window closed). */
export interface Swept {
  claim: FileClaim;
  why: string;
}

/** A path asked for and a claim of another agent in its way. */
export interface Conflict {
  asked: string;
  held: FileClaim;
}

export const DEFAULT_TTL_MS = 60 * 60_000;
export const MAX_TTL_MS = 7 * 24 * 60 * 60_000;
/** A claim keeps at most this many waiters: the first ones asked first. */
const MAX_WAITERS = 20;
const MAX_REASON_CHARS = 200;

const isoAt = (ms: number) => new Date(ms).toISOString();
const expiresAt = (claim: FileClaim) => Date.parse(claim.expires_at);

/** Claims that count (not run out, holder not gone) and those to sweep. */
export function sweep(snapshot: ClaimsSnapshot, judge: Judge = () => null): { live: FileClaim[]; swept: Swept[] } {
  const live: FileClaim[] = [];
  const swept: Swept[] = [];
  for (const claim of snapshot.claims) {
    const why = !(expiresAt(claim) > snapshot.now) ? "expired" : judge(claim);
    if (why === null) live.push(claim);
    else swept.push({ claim, why });
  }
  return { live, swept };
}

/** Whether a claim of one agent stands in the way of another agent's claim on `path`. */
function inTheWay(held: FileClaim, asker: string, path: string, shared: boolean): boolean {
  return held.holder !== asker && !(held.shared && shared) && overlaps(held.path, path);
}

/** The claims among `live` in the way of `asker` claiming `paths`. */
export function conflictsOf(live: readonly FileClaim[], asker: string, paths: readonly string[], shared: boolean): Conflict[] {
  const conflicts: Conflict[] = [];
  for (const asked of paths) for (const held of live) if (inTheWay(held, asker, asked, shared)) conflicts.push({ asked, held });
  return conflicts;
}

/** Adds `asker` to the waiters of the claims it ran into; returns the new list and the conflicts it is new to. */
function addWaiter(live: FileClaim[], asker: string, conflicts: readonly Conflict[]): { claims: FileClaim[]; news: Conflict[] } {
  const ids = new Set(conflicts.map((conflict) => conflict.held.id));
  const fresh = new Set<string>();
  const claims = live.map((claim) => {
    if (!ids.has(claim.id) || claim.waiters.includes(asker) || claim.waiters.length >= MAX_WAITERS) return claim;
    fresh.add(claim.id);
    return { ...claim, waiters: [...claim.waiters, asker] };
  });
  const told = new Set<string>();
  const news = conflicts.filter((conflict) => {
    if (!fresh.has(conflict.held.id) || told.has(conflict.held.id)) return false;
    told.add(conflict.held.id);
    return true;
  });
  return { claims, news };
}

export interface ClaimRequest {
  holder: string;
  /** Normalized paths or globs. */
  paths: string[];
  shared: boolean;
  reason?: string;
  ttlMs: number;
  auto?: boolean;
  place: HolderPlace;
}

export type ClaimOutcome =
  | { granted: FileClaim[]; swept: Swept[] }
  /** `news`: the conflicts the asker was not yet waiting on: the holders to tell, once. */
  | { conflicts: Conflict[]; news: Conflict[]; swept: Swept[] };

/** The holder's claims carry where it is now and that it was alive now: its claims follow it to another pane. */
const movedTo = (claims: FileClaim[], holder: string, place: HolderPlace, now: number) =>
  claims.map((claim) =>
    claim.holder === holder ? { ...claim, host: place.host, server: place.server, pane: place.pane, active_at: isoAt(now) } : claim,
  );

/**
 * Claims `request.paths` for its holder, all or none. Refused when any is in the way of another agent's claim that
 * counts: the asker then waits on those claims (it is told when they go). Granted: a path the holder already claims
 * is claimed again (its kind, reason and time replaced), others are added.
 */
export function decideClaim(
  snapshot: ClaimsSnapshot,
  request: ClaimRequest,
  judge: Judge,
  newId: () => string,
): ClaimsChange<ClaimOutcome> {
  const { live, swept } = sweep(snapshot, judge);
  const conflicts = conflictsOf(live, request.holder, request.paths, request.shared);
  if (conflicts.length > 0) {
    const { claims, news } = addWaiter(live, request.holder, conflicts);
    const changed = swept.length > 0 || news.length > 0;
    return { claims: changed ? claims : null, result: { conflicts, news, swept } };
  }
  const expires = isoAt(snapshot.now + request.ttlMs);
  const claims = movedTo(live, request.holder, request.place, snapshot.now);
  const granted: FileClaim[] = [];
  for (const path of new Set(request.paths)) {
    const index = claims.findIndex((claim) => claim.holder === request.holder && claim.path === path);
    const base = index >= 0 ? claims[index]! : null;
    const claim: FileClaim = {
      id: base?.id ?? newId(),
      path,
      holder: request.holder,
      shared: request.shared,
      ...(request.reason === undefined ? {} : { reason: request.reason }),
      // A claim made by hand stays one: an edit the guard lets through never turns it into an automatic one.
      ...(request.auto && (base === null || base.auto) ? { auto: true } : {}),
      claimed_at: base?.claimed_at ?? isoAt(snapshot.now),
      expires_at: expires,
      active_at: isoAt(snapshot.now),
      ...request.place,
      waiters: base?.waiters ?? [],
    };
    if (index >= 0) claims[index] = claim;
    else claims.push(claim);
    granted.push(claim);
  }
  return { claims, result: { granted, swept } };
}

function notHeld(paths: readonly string[]): AgentmailError {
  const list = paths.map((path) => `'${displayName(path)}'`).join(", ");
  return new AgentmailError("not_found", `you hold no claim on ${list}; run 'agentmail claims --mine' to see yours`);
}

/** Whether `path`, as given to release or renew, names the claim: as written, or as the directory it claims whole. */
const names = (path: string, claim: FileClaim) => claim.path === path || claim.path === `${path}/**`;

/** The holder's claims named by `paths` (all of them when null); throws not_found, naming them, for one it does not hold. */
function held(live: readonly FileClaim[], holder: string, paths: readonly string[] | null): FileClaim[] {
  const mine = live.filter((claim) => claim.holder === holder);
  if (paths === null) return mine;
  const missing = paths.filter((path) => !mine.some((claim) => names(path, claim)));
  if (missing.length > 0) throw notHeld(missing);
  return mine.filter((claim) => paths.some((path) => names(path, claim)));
}

/** Gives the holder's claims another `ttlMs` from now (those on `paths`, or all). At least one must be held. */
export function decideRenew(
  snapshot: ClaimsSnapshot,
  holder: string,
  paths: readonly string[] | null,
  ttlMs: number,
  place: HolderPlace,
): ClaimsChange<FileClaim[]> {
  // A claim of the holder that ran out but is still stored was not swept, so no other claim was granted over it since.
  const chosen = held(snapshot.claims, holder, paths);
  if (chosen.length === 0) throw new AgentmailError("not_found", "you hold no claims to renew; claim paths with 'agentmail claim <path>'");
  const ids = new Set(chosen.map((claim) => claim.id));
  const expires = isoAt(snapshot.now + ttlMs);
  const claims = movedTo(snapshot.claims, holder, place, snapshot.now).map((claim) =>
    ids.has(claim.id) ? { ...claim, expires_at: expires } : claim,
  );
  return { claims, result: claims.filter((claim) => ids.has(claim.id)) };
}

export interface Release {
  released: FileClaim[];
  swept: Swept[];
}

/** Which of the holder's claims to release: those on `paths`, the automatic ones, or (neither) all. */
export interface ReleaseSelection {
  paths?: readonly string[];
  auto?: boolean;
}

/** Releases the holder's claims (see ReleaseSelection); sweeps what ran out on the way. */
export function decideRelease(snapshot: ClaimsSnapshot, holder: string, selection: ReleaseSelection, judge?: Judge): ClaimsChange<Release> {
  const { live, swept } = sweep(snapshot, judge);
  const named = selection.paths && selection.paths.length > 0 ? selection.paths : null;
  // A claim of the holder that ran out is released by name too: the holder asked for it to go, and it is gone.
  const ranOut = swept.filter((entry) => entry.claim.holder === holder).map((entry) => entry.claim);
  const chosen = held([...live, ...ranOut], holder, named).filter((claim) => !selection.auto || claim.auto === true);
  const ids = new Set(chosen.map((claim) => claim.id));
  const released = chosen.filter((claim) => live.includes(claim));
  const claims = live.filter((claim) => !ids.has(claim.id));
  const changed = claims.length !== snapshot.claims.length;
  return { claims: changed ? claims : null, result: { released, swept } };
}

/** Drops the claim `id` (its holder is gone, and the person released it); returns it, or null when it is not stored. */
export function decideDrop(snapshot: ClaimsSnapshot, id: string): ClaimsChange<FileClaim | null> {
  const dropped = snapshot.claims.find((claim) => claim.id === id) ?? null;
  return { claims: dropped === null ? null : snapshot.claims.filter((claim) => claim.id !== id), result: dropped };
}

/** Sweeps every claim that no longer counts (cleanup); a dry run changes nothing. */
export function decideSweep(snapshot: ClaimsSnapshot, judge: Judge, dryRun: boolean): ClaimsChange<Swept[]> {
  const { live, swept } = sweep(snapshot, judge);
  return { claims: dryRun || swept.length === 0 ? null : live, result: swept };
}

/** The asker waits on these claims (an edit the guard refused): told when they go. Returns the conflicts it is new to. */
export function decideWait(snapshot: ClaimsSnapshot, asker: string, conflicts: readonly Conflict[]): ClaimsChange<Conflict[]> {
  const ids = new Set(snapshot.claims.map((claim) => claim.id));
  const still = conflicts.filter((conflict) => ids.has(conflict.held.id));
  const { claims, news } = addWaiter(snapshot.claims, asker, still);
  return { claims: news.length > 0 ? claims : null, result: news };
}

const text = (value: unknown): value is string => typeof value === "string";

/** A stored claim, or null when the entry is not one (one bad entry never hides the others). */
function parseClaim(value: unknown): FileClaim | null {
  if (value === null || typeof value !== "object" || Array.isArray(value)) return null;
  const entry = value as Record<string, unknown>;
  const { id, path, holder, shared, claimed_at, expires_at, active_at, host, server, pane, reason, auto, waiters } = entry;
  if (!text(id) || !text(path) || !text(holder) || typeof shared !== "boolean" || !text(claimed_at) || !text(expires_at)) return null;
  if (!Number.isFinite(Date.parse(expires_at)) || !text(host) || !(server === null || text(server)) || !text(pane)) return null;
  return {
    id,
    path,
    holder,
    shared,
    ...(text(reason) ? { reason } : {}),
    ...(auto === true ? { auto: true } : {}),
    claimed_at,
    expires_at,
    active_at: text(active_at) ? active_at : claimed_at,
    host,
    server,
    pane,
    waiters: Array.isArray(waiters) ? waiters.filter(text) : [],
  };
}

/** The claims of a stored document `{"claims": [...]}`; null when the text is not such a document. */
export function parseClaims(json: string): FileClaim[] | null {
  let value: unknown;
  try {
    value = JSON.parse(json);
  } catch {
    return null;
  }
  if (value === null || typeof value !== "object" || !Array.isArray((value as { claims?: unknown }).claims)) return null;
  return (value as { claims: unknown[] }).claims.flatMap((entry) => parseClaim(entry) ?? []);
}

export const serializeClaims = (claims: readonly FileClaim[]): string => JSON.stringify({ claims }) + "\n";

/** A reason as given to `claim --reason`: one line, at most 200 characters. */
export function checkReason(reason: string): string {
  const trimmed = reason.trim();
  if (trimmed === "" || /[\u0000-\u001f\u007f-\u009f]/.test(trimmed) || [...trimmed].length > MAX_REASON_CHARS) {
    throw new AgentmailError("usage", `--reason takes one line of 1 to ${MAX_REASON_CHARS} characters`);
  }
  return trimmed;
}

/** A claim's time to live: `90` or `90s`, `30m`, `2h`, `1d`; from 1 second to 7 days. */
export const parseTtl = (given: string, flag = "--ttl"): number => parseDuration(given, flag, MAX_TTL_MS);

/** A time as claims show it: ISO 8601 to the second, UTC. */
export const shownTime = (iso: string): string => iso.replace(/\.\d{3}Z$/, "Z");

/** How long until `iso` from `now`, roughly: `42s`, `17m`, `3h05m`; `0s` once it has passed. */
export function timeLeft(iso: string, now: number): string {
  const seconds = Math.max(0, Math.round((Date.parse(iso) - now) / 1000));
  if (seconds < 60) return `${seconds}s`;
  const minutes = Math.round(seconds / 60);
  if (minutes < 60) return `${minutes}m`;
  return `${Math.floor(minutes / 60)}h${String(minutes % 60).padStart(2, "0")}m`;
}

/**
 * How many claims or paths one message lists at most (an error, a guard's refusal, a notice): the rest are counted,
 * so an asker who runs into thousands of claims (`--auto-claim` gathers them edit by edit) reads a few lines.
 */
export const MAX_LISTED = 10;

/** The first MAX_LISTED of `items` joined by `separator`, then `more(n)` for the n left out. */
export function listBounded(items: readonly string[], separator: string, more: (count: number) => string): string {
  if (items.length <= MAX_LISTED) return items.join(separator);
  return [...items.slice(0, MAX_LISTED), more(items.length - MAX_LISTED)].join(separator);
}

/** Each claim once (by id), in the order met. */
export function distinctClaims(claims: Iterable<FileClaim>): FileClaim[] {
  return [...new Map([...claims].map((claim) => [claim.id, claim])).values()];
}

/** One claim in words: `src/** (exclusive, bob, "refactoring auth", until 2026-05-01T11:00:00Z, 59m left)`. */
export function describeClaim(claim: FileClaim, now: number): string {
  const reason = claim.reason === undefined ? "" : `, "${displayName(claim.reason)}"`;
  const kind = claim.shared ? "shared" : "exclusive";
  return `${displayName(claim.path)} (${kind}, ${displayName(claim.holder)}${reason}, until ${shownTime(claim.expires_at)}, ${timeLeft(claim.expires_at, now)} left)`;
}
