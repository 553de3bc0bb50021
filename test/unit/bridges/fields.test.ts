/**
 * Mapping between peers' messages and agentmail's record, both ways, on the seeds' examples: every field the seed
 * shows lands in the record (or in via), and every field survives record → peer file → record and
 * peer file → record → peer file.
 */
import { describe, expect, test } from "bun:test";
import { dmailKindOf, dmailToRecord, formatDmail, isIssueId, parseDmail, recordToDmail } from "../../../src/bridges/formats/dmail.ts";
import { feat124ToRecord, formatFeat124, parseFeat124, recordToFeat124 } from "../../../src/bridges/formats/feat124.ts";
import { formatRoo, parseRoo, recordToRoo, rooToRecord } from "../../../src/bridges/formats/roo.ts";
import { buildRecord, fieldsOf, subjectText, titleOf, type BridgeRecord, type MailFields } from "../../../src/bridges/fields.ts";
import { fixture } from "../../support/bridges.ts";

const FULL: MailFields = {
  subject: "Build is red: ☕ ünïcode",
  type: "task",
  priority: "urgent",
  tags: ["BUG-69", "ci", "1db8c5e4-7c66-41c0-944e-542a82c0b701"],
  thread_id: "Th1eAd01",
  in_reply_to: "Pr3vious",
  needs_response: true,
};

function outbound(fields: MailFields, body = "main fails since 4f2a\n\n- step 1\n- step 2"): BridgeRecord {
  const base = { id: "Ab3dE5gH", from: "alice", to: "feat124:worker-7", message: body, created_at: "2026-11-22T04:22:48.197Z" };
  return buildRecord(base, fields);
}

/** The record fields a trip must keep: everything but the id, the recipient, the sender's prefix and via. */
function kept(record: BridgeRecord) {
  const from = record.from.replace(/^(feat124|roo|dmail):/, "");
  return { from, message: record.message, created_at: record.created_at, ...fieldsOf(record) };
}

describe("inbound: the seeds' examples become records with every field", () => {
  test("FEAT-124: sender, type, time, tags, subject from the first heading, the body whole; to and the file in via", () => {
    const record = feat124ToRecord(parseFeat124(fixture("feat124-status.md")), {
      id: "NewId001",
      to: "alice",
      via: { bridge: "feat124", file: ".mail/alice/2024-01-28T15-30-00_worker-bug-069_status.md" },
    });
    expect(Object.keys(record)).toEqual(["id", "from", "to", "message", "read_flag", "created_at", "subject", "type", "tags", "via"]);
    expect(record).toMatchObject({
      id: "NewId001",
      from: "feat124:worker-bug-069",
      to: "alice",
      read_flag: false,
      created_at: "2024-01-28T15:30:00.000Z",
      subject: "Status Update",
      type: "status",
      tags: ["BUG-069", "fugue"],
      via: { bridge: "feat124", file: ".mail/alice/2024-01-28T15-30-00_worker-bug-069_status.md", fields: { to: "orchestrator" } },
    });
    expect(record.message.startsWith("## Status Update\n\nBUG-069")).toBe(true);
    expect(record.priority).toBeUndefined();
    expect(record.needs_response).toBeUndefined();
  });

  test("FEAT-124: an in_reply_to naming a file agentmail wrote becomes that message's id", () => {
    const text = fixture("feat124-status.md")
      .replace("priority: normal\n", "priority: urgent\nin_reply_to: 2024-01-28T15-00-00_alice_task.md\nthread_id: t-9\n")
      .replace("needs_response: false", "needs_response: true");
    const idOfFile = (name: string) => (name === "2024-01-28T15-00-00_alice_task.md" ? "Or1g1nal" : undefined);
    const record = feat124ToRecord(parseFeat124(text), { id: "x", to: "alice", via: { bridge: "feat124", file: "f" }, idOfFile });
    expect(record).toMatchObject({ priority: "urgent", in_reply_to: "Or1g1nal", thread_id: "t-9", needs_response: true });
    const unknown = feat124ToRecord(parseFeat124(text), { id: "x", to: "alice", via: { bridge: "feat124", file: "f" } });
    expect(unknown.in_reply_to).toBe("2024-01-28T15-00-00_alice_task.md");
  });

  test("Roo: sender, time, priority high, the bold first line as subject; the Roo id in via", () => {
    const inbound = { id: "NewId002", to: "tester", via: { bridge: "roo" as const, file: ".roo/mailbox/to-tester.md" } };
    const record = rooToRecord(parseRoo(fixture("roo-to-tester.md")), inbound);
    expect(record).toMatchObject({
      from: "roo:nestjs-developer",
      to: "tester",
      created_at: "2025-07-07T11:15:00.000Z",
      subject: "Request: Integration Test",
      priority: "high",
      via: { bridge: "roo", file: ".roo/mailbox/to-tester.md", id: "msg-a4b1c9e0" },
    });
    expect(record.via?.fields).toBeUndefined();
  });

  test("D-Mail: kind as type, description as subject, issues as tags; name and endpoint in via", () => {
    const record = dmailToRecord(parseDmail(fixture("dmail-report-my-42.md")), {
      id: "NewId003",
      to: "reviewer",
      via: { bridge: "dmail", endpoint: "paintress", file: ".expedition/outbox/report-my-42.md" },
      fileTime: "2026-01-01T00:00:00.000Z",
    });
    expect(record).toMatchObject({
      from: "dmail:paintress",
      to: "reviewer",
      created_at: "2026-01-01T00:00:00.000Z",
      subject: "Expedition #1 completed implement for MY-42",
      type: "report",
      tags: ["MY-42"],
      via: { bridge: "dmail", endpoint: "paintress", file: ".expedition/outbox/report-my-42.md", name: "report-my-42" },
    });
  });

  test("D-Mail: severity HIGH is priority high and kept as written; metadata that is not agentmail's is kept", () => {
    const extra = 'severity: HIGH\nmetadata:\n  idempotency_key: abc\n  created_at: "2026-02-03T04:05:06Z"\n';
    const text = fixture("dmail-report-my-42.md").replace('dmail-schema-version: "1"\n', `dmail-schema-version: "1"\n${extra}`);
    const record = dmailToRecord(parseDmail(text), { id: "x", to: "r", via: { bridge: "dmail", endpoint: "p", file: "f" } });
    expect(record.priority).toBe("high");
    expect(record.created_at).toBe("2026-02-03T04:05:06.000Z");
    expect(record.via?.fields).toEqual({ severity: "HIGH", metadata: { idempotency_key: "abc" } });
  });
});

describe("record → peer file → record keeps every field", () => {
  const inbound = (kind: "feat124" | "roo" | "dmail") => ({
    id: "Back0001",
    to: "worker-7",
    via: { bridge: kind, endpoint: kind === "dmail" ? "p" : undefined, file: "f" },
  });

  for (const fields of [FULL, {}, { priority: "low" }, { priority: "high", tags: ["only-a-tag"] }] as MailFields[]) {
    test(`FEAT-124 with ${JSON.stringify(fields)}`, () => {
      const record = outbound(fields);
      const back = feat124ToRecord(parseFeat124(formatFeat124(recordToFeat124(record, "worker-7"))), inbound("feat124"));
      expect(kept(back)).toEqual(kept(record));
      expect(back.via?.fields).toBeUndefined();
    });

    test(`D-Mail with ${JSON.stringify(fields)}`, () => {
      const record = outbound(fields);
      const back = dmailToRecord(parseDmail(formatDmail(recordToDmail(record))), inbound("dmail"));
      const { type, ...rest } = kept(back);
      const { type: sentType, ...sent } = kept(record);
      expect({ ...rest, from: sent.from }).toEqual(sent);
      expect(type).toBe(dmailKindOf(sentType));
      expect(back.via?.fields).toEqual({ metadata: { agentmail_id: "Ab3dE5gH", from: "alice" } });
    });

    test(`Roo with ${JSON.stringify(fields)}`, () => {
      const record = outbound(fields);
      const back = rooToRecord(parseRoo(formatRoo(recordToRoo(record))), inbound("roo"));
      const expected = kept(record);
      // Roo has two priorities: urgent and high are high, normal and low are normal.
      const priority = expected.priority === "urgent" || expected.priority === "high" ? "high" : undefined;
      expect(kept(back)).toEqual({ ...expected, priority } as ReturnType<typeof kept>);
      expect(back.via?.id).toBe("Ab3dE5gH");
    });
  }

  test("a body with blank lines, '---' lines and Unicode comes back byte for byte in every format", () => {
    const body = "\nfirst line blank\n---\nnot frontmatter\n\n☕ ünïcode\n";
    const record = outbound({}, body);
    expect(parseFeat124(formatFeat124(recordToFeat124(record, "w"))).body).toBe(body);
    expect(parseRoo(formatRoo(recordToRoo(record))).body).toBe(body);
    expect(parseDmail(formatDmail(recordToDmail(record))).body).toBe(body);
  });
});

describe("peer file → record → peer file keeps every field", () => {
  test("FEAT-124: the seed's file", () => {
    const original = parseFeat124(fixture("feat124-status.md"));
    const record = feat124ToRecord(original, { id: "x", to: "alice", via: { bridge: "feat124", file: "f" } });
    const again = parseFeat124(formatFeat124(recordToFeat124(record, "alice")));
    // What the seed says explicitly as a default (priority normal, needs_response false) is the same message unsaid.
    expect({ ...again, subject: undefined } as typeof original).toEqual({ ...original, priority: undefined, needs_response: undefined });
    expect(again.subject).toBe("Status Update");
  });

  test("FEAT-124: unknown keys and in_reply_to file names survive", () => {
    const extra = "in_reply_to: 2024-01-28T15-00-00_alice_task.md\nsession: s-1\n";
    const text = fixture("feat124-status.md").replace("priority: normal\n", extra);
    const original = parseFeat124(text);
    const idOfFile = () => "Or1g1nal";
    const fileOfId = (id: string) => (id === "Or1g1nal" ? "2024-01-28T15-00-00_alice_task.md" : undefined);
    const record = feat124ToRecord(original, { id: "x", to: "alice", via: { bridge: "feat124", file: "f" }, idOfFile });
    const again = recordToFeat124(record, "alice", fileOfId);
    expect(again.in_reply_to).toBe("2024-01-28T15-00-00_alice_task.md");
    expect(again.other).toEqual({ session: "s-1" });
    expect(again.to).toBe("orchestrator");
  });

  test("Roo: the seed's file, its id included", () => {
    const original = parseRoo(fixture("roo-to-tester.md"));
    const record = rooToRecord(original, { id: "x", to: "tester", via: { bridge: "roo", file: "f" } });
    expect({ ...parseRoo(formatRoo(recordToRoo(record))), subject: undefined } as typeof original).toEqual(original);
  });

  test("D-Mail: the seed's file, and one with severity, targets and metadata", () => {
    const original = parseDmail(fixture("dmail-report-my-42.md"));
    const inbound = { id: "x", to: "r", via: { bridge: "dmail" as const, endpoint: "p", file: "f" }, fileTime: "2026-01-01T00:00:00.000Z" };
    const again = recordToDmail(dmailToRecord(original, inbound));
    expect({ ...again.frontmatter, metadata: undefined } as typeof original.frontmatter).toEqual(original.frontmatter);
    expect(again.body).toBe(original.body);
    const rich = fixture("dmail-report-my-42.md").replace(
      'dmail-schema-version: "1"\n',
      'dmail-schema-version: "1"\nseverity: medium\ntargets: [svc-a, svc-b]\n' +
        'metadata:\n  convergence_for: w3\n  created_at: "2026-02-03T04:05:06Z"\n',
    );
    const richOriginal = parseDmail(rich);
    const richAgain = recordToDmail(dmailToRecord(richOriginal, inbound));
    const metadata = { convergence_for: "w3", created_at: "2026-02-03T04:05:06.000Z" };
    expect(richAgain.frontmatter).toEqual({ ...richOriginal.frontmatter, metadata });
  });
});

describe("mapping rules", () => {
  test("D-Mail kinds: a kind as it is, report as report, anything else a specification", () => {
    expect(dmailKindOf("implementation-feedback")).toBe("implementation-feedback");
    expect(dmailKindOf("report")).toBe("report");
    expect(dmailKindOf("task")).toBe("specification");
    expect(dmailKindOf(undefined)).toBe("specification");
  });

  test("a D-Mail's description is the subject, else the body's first line without heading marks", () => {
    expect(recordToDmail(outbound({ subject: "S" })).frontmatter.description).toBe("S");
    expect(recordToDmail(outbound({}, "\n## Fix the login\n\nbody")).frontmatter.description).toBe("Fix the login");
    expect(recordToDmail(outbound({}, "")).frontmatter.description).toBe("");
  });

  test("priority to severity: urgent and high are high, low is low, normal says nothing; urgent also in metadata", () => {
    const urgent = recordToDmail(outbound({ priority: "urgent" })).frontmatter;
    expect(urgent).toMatchObject({ severity: "high", metadata: { priority: "urgent" } });
    expect(recordToDmail(outbound({ priority: "high" })).frontmatter.severity).toBe("high");
    expect(recordToDmail(outbound({ priority: "low" })).frontmatter.severity).toBe("low");
    expect(recordToDmail(outbound({})).frontmatter.severity).toBeUndefined();
  });

  test("tracker ids (MY-42) and Linear UUIDs are issues; other tags go to metadata", () => {
    const dmail = recordToDmail(outbound(FULL));
    expect(dmail.frontmatter.issues).toEqual(["BUG-69", "1db8c5e4-7c66-41c0-944e-542a82c0b701"]);
    expect(dmail.frontmatter.metadata).toMatchObject({
      tags: "BUG-69,ci,1db8c5e4-7c66-41c0-944e-542a82c0b701",
      agentmail_id: "Ab3dE5gH",
      thread_id: "Th1eAd01",
      in_reply_to: "Pr3vious",
      needs_response: "true",
    });
    expect(isIssueId("MY-42")).toBe(true);
    expect(isIssueId("fugue")).toBe(false);
    expect(isIssueId("v1-2")).toBe(true);
  });

  test("a subject is one line of at most 200 characters without control characters", () => {
    expect(subjectText("  a\tb  \nsecond")).toBe("a b");
    expect([...subjectText("é".repeat(300))!].length).toBe(200);
    expect(subjectText("  \n ")).toBeUndefined();
    expect(titleOf("\n# Title #\ntext")).toBe("Title");
    expect(titleOf("**Bold title**\n")).toBe("Bold title");
    expect(titleOf("plain\n# later")).toBeUndefined();
  });

  test("a record with a type or priority at its default does not store it", () => {
    expect(fieldsOf({ type: "message", priority: "normal", tags: [], needs_response: false })).toEqual({});
  });
});
