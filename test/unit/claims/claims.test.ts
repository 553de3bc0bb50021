/** The claims decisions (src/claims/claims.ts), on an injected clock: conflicts, waiters, expiry, release, renew. */
import { describe, expect, test } from "bun:test";
import {
  checkReason,
  decideClaim,
  decideRelease,
  decideRenew,
  decideSweep,
  decideWait,
  describeClaim,
  parseClaims,
  parseTtl,
  serializeClaims,
  timeLeft,
  type ClaimOutcome,
  type ClaimRequest,
  type ClaimsSnapshot,
  type FileClaim,
  type Judge,
} from "../../../src/claims/claims.ts";
import { AgentmailError } from "../../../src/mail/errors.ts";

const T0 = Date.parse("2026-05-01T10:00:00.000Z");
const MINUTE = 60_000;
let ids = 0;
const newId = () => `id${++ids}`;
const alive: Judge = () => null;

function request(holder: string, paths: string[], extra: Partial<ClaimRequest> = {}): ClaimRequest {
  return { holder, paths, shared: false, ttlMs: 60 * MINUTE, place: { host: "h", server: "/tmp/s,1", pane: `%${holder}` }, ...extra };
}

/** A little world of claims: each step decides on what the last one stored, at the clock's time. */
function world() {
  let claims: FileClaim[] = [];
  let now = T0;
  const snapshot = (): ClaimsSnapshot => ({ claims, now });
  const store = <T>(change: { claims: FileClaim[] | null; result: T }): T => {
    if (change.claims !== null) claims = change.claims;
    return change.result;
  };
  return {
    get claims() {
      return claims;
    },
    advance: (ms: number) => void (now += ms),
    claim: (req: ClaimRequest, judge: Judge = alive): ClaimOutcome => store(decideClaim(snapshot(), req, judge, newId)),
    release: (holder: string, selection: { paths?: string[]; auto?: boolean } = {}, judge?: Judge) =>
      store(decideRelease(snapshot(), holder, selection, judge)),
    renew: (holder: string, paths: string[] | null, ttlMs = 60 * MINUTE) =>
      store(decideRenew(snapshot(), holder, paths, ttlMs, { host: "h", server: null, pane: "%9" })),
    sweep: (judge: Judge, dryRun = false) => store(decideSweep(snapshot(), judge, dryRun)),
    wait: (asker: string, conflicts: Parameters<typeof decideWait>[2]) => store(decideWait(snapshot(), asker, conflicts)),
  };
}

function thrownBy(work: () => unknown): AgentmailError {
  try {
    work();
  } catch (error) {
    expect(error).toBeInstanceOf(AgentmailError);
    return error as AgentmailError;
  }
  throw new Error("expected an AgentmailError, nothing was thrown");
}

describe("claiming", () => {
  test("an exclusive claim refuses an overlapping claim of another agent, naming it, and grants a disjoint one", () => {
    const w = world();
    const granted = w.claim(request("alice", ["src/**"], { reason: "refactor" }));
    expect("granted" in granted && granted.granted.map((claim) => [claim.path, claim.holder, claim.reason])).toEqual([
      ["src/**", "alice", "refactor"],
    ]);
    const refused = w.claim(request("bob", ["docs/a.md", "src/a.ts"]));
    expect("conflicts" in refused && refused.conflicts.map((conflict) => [conflict.asked, conflict.held.holder])).toEqual([
      ["src/a.ts", "alice"],
    ]);
    // All or none: docs/a.md was not claimed either.
    expect(w.claims.map((claim) => claim.path)).toEqual(["src/**"]);
    expect("granted" in w.claim(request("bob", ["docs/a.md"]))).toBe(true);
  });

  test("shared claims live together; an exclusive one refuses them and they refuse it", () => {
    const w = world();
    expect("granted" in w.claim(request("alice", ["src/config.ts"], { shared: true }))).toBe(true);
    expect("granted" in w.claim(request("bob", ["src/*.ts"], { shared: true }))).toBe(true);
    expect("conflicts" in w.claim(request("carol", ["src/config.ts"]))).toBe(true);
    // alice asks for an exclusive claim where bob holds a shared one.
    expect("conflicts" in w.claim(request("alice", ["src/config.ts"]))).toBe(true);
  });

  test("an agent never conflicts with itself; claiming a path again replaces its kind, reason and time, keeps its id", () => {
    const w = world();
    const first = w.claim(request("alice", ["src/a.ts"], { reason: "one" }));
    const id = "granted" in first ? first.granted[0]!.id : "";
    w.advance(10 * MINUTE);
    expect("granted" in w.claim(request("alice", ["src/**"]))).toBe(true);
    const again = w.claim(request("alice", ["src/a.ts"], { shared: true, reason: "two" }));
    expect(
      "granted" in again && again.granted.map((claim) => [claim.id, claim.shared, claim.reason, claim.claimed_at, claim.expires_at]),
    ).toEqual([[id, true, "two", new Date(T0).toISOString(), new Date(T0 + 70 * MINUTE).toISOString()]]);
    expect(w.claims.length).toBe(2);
  });

  test("a refused asker waits on the claim: its holder is news once, however often it asks", () => {
    const w = world();
    w.claim(request("alice", ["src/**"]));
    const first = w.claim(request("bob", ["src/a.ts"]));
    const second = w.claim(request("bob", ["src/b.ts"]));
    expect("news" in first && first.news.map((conflict) => conflict.held.holder)).toEqual(["alice"]);
    expect("news" in second && second.news).toEqual([]);
    expect(w.claims[0]!.waiters).toEqual(["bob"]);
  });

  test("a claim whose time ran out no longer counts and is swept by the next change, with why", () => {
    const w = world();
    w.claim(request("alice", ["src/a.ts"], { ttlMs: 2_000 }));
    w.advance(1_999);
    expect("conflicts" in w.claim(request("bob", ["src/a.ts"]))).toBe(true);
    w.advance(1);
    const after = w.claim(request("bob", ["src/a.ts"]));
    expect("granted" in after && after.swept.map((swept) => [swept.claim.holder, swept.why, swept.claim.waiters])).toEqual([
      ["alice", "expired", ["bob"]],
    ]);
    expect(w.claims.map((claim) => claim.holder)).toEqual(["bob"]);
  });

  test("a claim whose holder the judge finds gone is swept, with the judge's reason", () => {
    const w = world();
    w.claim(request("alice", ["src/a.ts"]));
    const gone: Judge = (claim) => (claim.holder === "alice" ? "its holder went offline" : null);
    const after = w.claim(request("bob", ["src/a.ts"]), gone);
    expect("granted" in after && after.swept.map((swept) => swept.why)).toEqual(["its holder went offline"]);
  });

  test("claims follow their holder: a claim from another pane moves all of its claims there", () => {
    const w = world();
    w.claim(request("alice", ["a"]));
    w.claim(request("alice", ["b"], { place: { host: "h", server: "/tmp/s,1", pane: "%7" } }));
    expect(w.claims.map((claim) => claim.pane)).toEqual(["%7", "%7"]);
  });

  test("an automatic claim stays automatic; a claim made by hand is never turned into one", () => {
    const w = world();
    w.claim(request("alice", ["by-hand.ts"]));
    w.claim(request("alice", ["by-hand.ts", "edited.ts"], { auto: true }));
    expect(w.claims.map((claim) => [claim.path, claim.auto === true])).toEqual([
      ["by-hand.ts", false],
      ["edited.ts", true],
    ]);
  });
});

describe("releasing and renewing", () => {
  test("release by path, the automatic ones, or all; a path not held refuses, naming it, and changes nothing", () => {
    const w = world();
    w.claim(request("alice", ["a", "b"]));
    w.claim(request("alice", ["c"], { auto: true }));
    w.claim(request("bob", ["d"]));
    const error = thrownBy(() => w.release("alice", { paths: ["a", "zzz"] }));
    expect(error.code).toBe("not_found");
    expect(error.message).toContain("'zzz'");
    expect(w.claims.length).toBe(4);
    expect(w.release("alice", { paths: ["a"] }).released.map((claim) => claim.path)).toEqual(["a"]);
    // A directory claimed whole is released by its name too.
    w.claim(request("alice", ["docs/**"]));
    expect(w.release("alice", { paths: ["docs"] }).released.map((claim) => claim.path)).toEqual(["docs/**"]);
    expect(w.release("alice", { auto: true }).released.map((claim) => claim.path)).toEqual(["c"]);
    expect(w.release("alice").released.map((claim) => claim.path)).toEqual(["b"]);
    expect(w.release("alice").released).toEqual([]);
    expect(w.claims.map((claim) => claim.holder)).toEqual(["bob"]);
  });

  test("releasing a path whose claim ran out is no error, and its waiters hear of it through the sweep", () => {
    const w = world();
    w.claim(request("alice", ["a"], { ttlMs: 1_000 }));
    w.claim(request("bob", ["a"]));
    w.advance(5_000);
    const outcome = w.release("alice", { paths: ["a"] });
    expect(outcome.released).toEqual([]);
    expect(outcome.swept.map((swept) => [swept.claim.path, swept.claim.waiters])).toEqual([["a", ["bob"]]]);
  });

  test("renew gives the holder's claims another ttl from now; none held refuses", () => {
    const w = world();
    w.claim(request("alice", ["a", "b"], { ttlMs: MINUTE }));
    w.advance(30_000);
    expect(w.renew("alice", ["a"], 10 * MINUTE).map((claim) => [claim.path, claim.expires_at])).toEqual([
      ["a", new Date(T0 + 30_000 + 10 * MINUTE).toISOString()],
    ]);
    expect(w.renew("alice", null).map((claim) => claim.path)).toEqual(["a", "b"]);
    expect(thrownBy(() => w.renew("carol", null)).code).toBe("not_found");
    expect(thrownBy(() => w.renew("alice", ["zzz"])).code).toBe("not_found");
  });

  test("a sweep removes what no longer counts; a dry run reports the same and changes nothing", () => {
    const w = world();
    w.claim(request("alice", ["a"], { ttlMs: 1_000 }));
    w.claim(request("bob", ["b"]));
    w.claim(request("carol", ["c"]));
    w.advance(2_000);
    const judge: Judge = (claim) => (claim.holder === "bob" ? "its holder's window is closed" : null);
    expect(w.sweep(judge, true).map((swept) => swept.why)).toEqual(["expired", "its holder's window is closed"]);
    expect(w.claims.length).toBe(3);
    expect(w.sweep(judge).length).toBe(2);
    expect(w.claims.map((claim) => claim.holder)).toEqual(["carol"]);
  });

  test("an edit refused by the guard makes the editor a waiter, once", () => {
    const w = world();
    w.claim(request("alice", ["src/**"]));
    const conflicts = [{ asked: "src/a.ts", held: w.claims[0]! }];
    expect(w.wait("bob", conflicts).length).toBe(1);
    expect(w.wait("bob", conflicts).length).toBe(0);
    expect(w.claims[0]!.waiters).toEqual(["bob"]);
  });
});

describe("the stored document and the words", () => {
  test("a stored document round-trips; a bad entry is dropped, the others kept; a document that is not one is null", () => {
    const w = world();
    w.claim(request("alice", ["a"], { reason: "r" }));
    const text = serializeClaims(w.claims);
    expect(parseClaims(text)).toEqual(w.claims);
    const mixed = JSON.stringify({ claims: [{ junk: true }, ...w.claims, 7] });
    expect(parseClaims(mixed)).toEqual(w.claims);
    expect(parseClaims("not json")).toBeNull();
    expect(parseClaims("[]")).toBeNull();
  });

  test("durations and reasons are checked as the flags take them", () => {
    expect([parseTtl("90"), parseTtl("90s"), parseTtl("30m"), parseTtl("2h"), parseTtl("1d"), parseTtl("1.5h")]).toEqual([
      90_000, 90_000, 1_800_000, 7_200_000, 86_400_000, 5_400_000,
    ]);
    for (const bad of ["", "0", "0.5s", "8d", "1w", "-5", "soon"]) expect(thrownBy(() => parseTtl(bad)).code).toBe("usage");
    expect(checkReason("  refactoring auth ")).toBe("refactoring auth");
    for (const bad of ["", "two\nlines", "x".repeat(201)]) expect(thrownBy(() => checkReason(bad)).code).toBe("usage");
  });

  test("a claim in words: path, kind, holder, reason, until when and how long is left", () => {
    const w = world();
    w.claim(request("alice", ["src/**"], { reason: "refactor" }));
    expect(describeClaim(w.claims[0]!, T0 + 59 * MINUTE + 30_000)).toBe(
      'src/** (exclusive, alice, "refactor", until 2026-05-01T11:00:00Z, 30s left)',
    );
    expect([timeLeft("2026-05-01T10:00:42Z", T0), timeLeft("2026-05-01T12:05:00Z", T0), timeLeft("2026-05-01T09:00:00Z", T0)]).toEqual([
      "42s",
      "2h05m",
      "0s",
    ]);
  });
});
