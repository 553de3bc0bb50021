/**
 * The claims part of the Store contract (store.fileClaims, store.updateFileClaims), for every engine: the same tests
 * run against the file store and the Redis store. Each test opens its own fresh store, and more handles on it where
 * it checks what other processes would see.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { decideClaim, type ClaimRequest, type FileClaim } from "../../src/claims/claims.ts";
import { AgentmailError } from "../../src/mail/errors.ts";
import type { Store } from "../../src/store/store.ts";
import type { StoreFactory } from "./store-contract.ts";

let ids = 0;
const newId = () => `c${process.pid}x${++ids}`;

export function request(holder: string, paths: string[], extra: Partial<ClaimRequest> = {}): ClaimRequest {
  return { holder, paths, shared: false, ttlMs: 3_600_000, place: { host: "h", server: null, pane: "%0" }, ...extra };
}

/** Claims through the store as the claim action does: atomically, on the store's clock. */
export function claimThrough(store: Store, req: ClaimRequest) {
  return store.updateFileClaims((snapshot) => decideClaim(snapshot, req, () => null, newId));
}

export function claimsContract(factory: StoreFactory): void {
  const opened: Store[] = [];
  afterAll(() => {
    for (const store of opened) store.close();
  });
  async function fresh(label: string): Promise<{ store: Store; again: () => Promise<Store> }> {
    const place = factory.freshPlace(label);
    const open = async () => {
      const store = await factory.open(place);
      opened.push(store);
      return store;
    };
    return { store: await open(), again: open };
  }

  describe("claims on paths", () => {
    test("a store with no claims has none, and a clock", async () => {
      const { store } = await fresh("claims-empty");
      const snapshot = await store.fileClaims();
      expect(snapshot.claims).toEqual([]);
      expect(Number.isFinite(snapshot.now)).toBe(true);
    });

    test("what one handle stores, another reads; a change that returns null or throws changes nothing", async () => {
      const { store, again } = await fresh("claims-shared");
      const outcome = await claimThrough(store, request("alice", ["src/**"], { reason: "r" }));
      expect("granted" in outcome).toBe(true);
      const other = await again();
      const seen = (await other.fileClaims()).claims;
      expect(seen.map((claim) => [claim.path, claim.holder, claim.reason])).toEqual([["src/**", "alice", "r"]]);
      expect(await other.updateFileClaims(() => ({ claims: null, result: 7 }))).toBe(7);
      const refusal = new AgentmailError("not_found", "nope");
      const thrown = await other
        .updateFileClaims(() => {
          throw refusal;
        })
        .catch((error: unknown) => error);
      expect(thrown).toBe(refusal);
      expect((await store.fileClaims()).claims).toEqual(seen);
    });

    test("a claim's times are on the store's clock", async () => {
      const { store } = await fresh("claims-clock");
      const outcome = await claimThrough(store, request("alice", ["a"], { ttlMs: 60_000 }));
      const claim = "granted" in outcome ? outcome.granted[0]! : ({} as FileClaim);
      const { now } = await store.fileClaims();
      expect(Date.parse(claim.expires_at) - Date.parse(claim.claimed_at)).toBe(60_000);
      expect(Date.parse(claim.claimed_at)).toBeLessThanOrEqual(now);
    });

    test("24 concurrent changes from 4 handles: none is lost", async () => {
      const { store, again } = await fresh("claims-no-lost-update");
      const handles = [store, await again(), await again(), await again()];
      await Promise.all(
        Array.from({ length: 24 }, (_, i) => claimThrough(handles[i % handles.length]!, request(`agent-${i}`, [`file-${i}`]))),
      );
      const paths = (await store.fileClaims()).claims.map((claim) => claim.path).sort();
      expect(paths).toEqual(Array.from({ length: 24 }, (_, i) => `file-${i}`).sort());
    });

    test("8 agents claim one path exclusively at once from their own handles: exactly one is granted", async () => {
      const { store, again } = await fresh("claims-one-winner");
      const handles = [store, ...(await Promise.all(Array.from({ length: 7 }, () => again())))];
      const outcomes = await Promise.all(
        handles.map((handle, i) => claimThrough(handle, request(`agent-${i}`, [i % 2 ? "src/a.ts" : "src/**"]))),
      );
      const winners = outcomes.flatMap((outcome, i) => ("granted" in outcome ? [`agent-${i}`] : []));
      expect(winners.length).toBe(1);
      expect((await store.fileClaims()).claims.map((claim) => claim.holder)).toEqual(winners);
    });
  });
}
