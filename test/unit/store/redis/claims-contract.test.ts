/**
 * The claims contract (test/support/claims-contract.ts) on the Redis store, against a private redis-server; and what
 * only a store shared by hosts must show: a host whose clock runs ahead cannot see a live claim as run out.
 */
import { expect, setSystemTime, test } from "bun:test";
import { claimsContract, claimThrough, request } from "../../../support/claims-contract.ts";
import { freshNamespace, redisContractPlaces, storeAt } from "./helpers.ts";

const redis = redisContractPlaces();

claimsContract(redis);

test("a host whose clock is 2 hours ahead still sees a 10-minute claim as live: expiry is the server's time", async () => {
  const namespace = freshNamespace("claims-skew");
  const here = storeAt(redis.url, namespace);
  const ahead = storeAt(redis.url, namespace, { host: "host-b" });
  try {
    expect("granted" in (await claimThrough(here, request("alice", ["src/a.ts"], { ttlMs: 10 * 60_000 })))).toBe(true);
    setSystemTime(new Date(Date.now() + 2 * 3_600_000));
    const outcome = await claimThrough(ahead, request("bob", ["src/a.ts"]));
    expect("conflicts" in outcome && outcome.conflicts.map((conflict) => conflict.held.holder)).toEqual(["alice"]);
    const { claims, now } = await ahead.fileClaims();
    expect(claims.map((claim) => claim.holder)).toEqual(["alice"]);
    expect(Date.parse(claims[0]!.expires_at)).toBeGreaterThan(now);
  } finally {
    setSystemTime();
    here.close();
    ahead.close();
  }
});
