/**
 * doctor's findings on what stands behind a Redis store, from the views it gathered (test/unit/store/redis/
 * sentinel.test.ts gathers them from a real deployment): sentinels that disagree, do not answer, are in TILT or see a
 * failover; a server that is a replica; replicas behind; `replicas=` that cannot be met or is 0 through Sentinel.
 */
import { describe, expect, test } from "bun:test";
import { replicationFindings } from "../../../src/doctor/redis-replication.ts";
import type { SentinelView, Topology } from "../../../src/store/server.ts";

const view = (sentinel: string, fields: Partial<SentinelView> = {}): SentinelView => ({
  sentinel,
  error: null,
  primary: "10.0.0.1:6379",
  flags: "master",
  replicas: 2,
  otherSentinels: 2,
  quorum: 2,
  tilt: false,
  ...fields,
});

const topology = (fields: Partial<Topology> = {}): Topology => ({
  sentinels: [view("s1:26379"), view("s2:26379"), view("s3:26379")],
  primaryName: "mail",
  server: "10.0.0.1:6379",
  role: "master",
  replicas: [
    { node: "10.0.0.2:6379", state: "online", behindBytes: 0, lagSeconds: 0 },
    { node: "10.0.0.3:6379", state: "online", behindBytes: 120, lagSeconds: 1 },
  ],
  wanted: 1,
  replicaTimeoutMs: 2000,
  ...fields,
});

const lines = (input: Topology) => replicationFindings(input).map((finding) => `${finding.status}: ${finding.message}`);

describe("doctor on the sentinels and replicas", () => {
  test("a whole deployment: the sentinels agree, each replica online, the writes' wait can be met", () => {
    expect(lines(topology())).toEqual([
      "ok: 3 of 3 sentinels answer and name the primary of mail: 10.0.0.1:6379 (quorum 2, each knowing 2 replicas and 2 other sentinels)",
      "ok: replica 10.0.0.2:6379: online, 0 bytes behind, last heard 0 s ago",
      "ok: replica 10.0.0.3:6379: online, 120 bytes behind, last heard 1 s ago",
      "ok: each write waits for 1 replica of 2 online (replicas=1): a failover keeps what was acknowledged",
    ]);
  });

  test("sentinels that disagree, do not answer, know no such primary, are in TILT or see it down: each said, with what to do", () => {
    const sentinels = [
      view("s1:26379", { tilt: true, flags: "master,o_down" }),
      view("s2:26379", { primary: "10.0.0.2:6379" }),
      view("s3:26379", { primary: null }),
      view("s4:26379", { error: "no answer within 2 s", primary: null }),
    ];
    const findings = replicationFindings(topology({ sentinels }));
    const said = findings.map((finding) => `${finding.status}: ${finding.message}`);
    expect(said).toContain(
      "note: sentinel s1:26379 is in TILT mode (its clock jumped: a machine too loaded or suspended); it starts no failover for 30 s",
    );
    expect(said).toContain("note: sentinel s1:26379 reports the primary as master,o_down: a failover may be under way");
    expect(said).toContain("problem: sentinel s3:26379 monitors no primary named mail");
    expect(said).toContain("problem: sentinel s4:26379 does not answer: no answer within 2 s");
    expect(said).toContain(
      "problem: the sentinels disagree on the primary of mail: s1:26379 names 10.0.0.1:6379, s2:26379 names 10.0.0.2:6379",
    );
    expect(findings.find((finding) => finding.message.startsWith("the sentinels disagree"))?.fix).toContain("wait for the failover");
    expect(said.some((line) => line.startsWith("ok: "))).toBe(true);
  });

  test("a minority of sentinels answering cannot fail over: a problem", () => {
    const sentinels = [
      view("s1:26379"),
      view("s2:26379", { error: "refused", primary: null }),
      view("s3:26379", { error: "refused", primary: null }),
    ];
    expect(lines(topology({ sentinels }))).toContain("problem: only 1 of 3 sentinels answer: no majority can agree on a failover");
  });

  test("a server that is a replica, replicas behind or syncing, and replicas= that cannot be met or is 0", () => {
    expect(lines(topology({ sentinels: null, role: "slave" }))).toEqual([
      "problem: the mail server 10.0.0.1:6379 is a replica (slave): every write is refused",
    ]);
    const behind = topology({
      replicas: [{ node: "10.0.0.2:6379", state: "wait_bgsave", behindBytes: 4096, lagSeconds: 9 }],
      wanted: 1,
    });
    expect(lines(behind)).toContain("note: replica 10.0.0.2:6379: wait_bgsave, 4096 bytes behind, last heard 9 s ago");
    expect(lines(behind)).toContain(
      "problem: replicas=1 in AGENTMAIL_URL asks each write to reach 1 replica, and 10.0.0.1:6379 has 0 online: every send fails after 2000 ms",
    );
    expect(lines(topology({ wanted: 0 }))).toContain(
      "note: replicas=0: a send is acknowledged before any replica has it, so a failover can lose the last ones sent",
    );
    // A single server with no replica and no wait: nothing to say.
    expect(lines(topology({ sentinels: null, replicas: [], wanted: 0 }))).toEqual([]);
    // INFO refused or the server away: the store's own findings say so.
    expect(lines(topology({ sentinels: null, role: null }))).toEqual([]);
  });
});
