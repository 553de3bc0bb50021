/**
 * The peers' wire formats in process: YAML frontmatter read and written, FEAT-124, Roo and D-Mail messages parsed
 * from the seeds' own examples (test/fixtures/bridges) with every field, written back, and the D-Mail v1 schema
 * enforced rule by rule. Hostile names never become paths.
 */
import { describe, expect, test } from "bun:test";
import { formatBridgeAddress, isBridgeAddress, parseBridgeAddress } from "../../../src/bridges/address.ts";
import { dmailFileName, formatDmail, parseDmail, validateDmail } from "../../../src/bridges/formats/dmail.ts";
import { feat124FileName, formatFeat124, parseFeat124 } from "../../../src/bridges/formats/feat124.ts";
import { checkOutboundFields } from "../../../src/bridges/fields.ts";
import {
  Malformed,
  optionalBoolean,
  optionalTextList,
  readFrontmatter,
  requiredTime,
  writeFrontmatter,
} from "../../../src/bridges/formats/frontmatter.ts";
import { checkPeerName, fileNamePiece, peerNameProblem } from "../../../src/bridges/files.ts";
import { formatRoo, parseRoo, rooFileName, rooSlugOf } from "../../../src/bridges/formats/roo.ts";
import { AgentmailError } from "../../../src/mail/errors.ts";

import { fixture, HOSTILE_YAML } from "../../support/bridges.ts";

function reason(run: () => unknown): string {
  try {
    run();
  } catch (error) {
    expect(error).toBeInstanceOf(Malformed);
    return (error as Error).message;
  }
  throw new Error("expected a Malformed");
}

describe("addresses", () => {
  test("feat124:, roo: and dmail: are bridge addresses; window names are not", () => {
    expect(isBridgeAddress("feat124:worker-7")).toBe(true);
    expect(isBridgeAddress("roo:tester")).toBe(true);
    expect(isBridgeAddress("dmail:paintress")).toBe(true);
    expect(isBridgeAddress("reviewer")).toBe(false);
    expect(isBridgeAddress("feat12:x")).toBe(false);
    expect(parseBridgeAddress("feat124:wörker 8")).toEqual({ kind: "feat124", target: "wörker 8" });
    expect(parseBridgeAddress("alice")).toBeNull();
    expect(formatBridgeAddress("roo", "tester")).toBe("roo:tester");
  });
});

describe("frontmatter", () => {
  test("splits frontmatter and body: one blank line after '---' and one final newline belong to the format", () => {
    const file = readFrontmatter("---\na: 1\nb: [x, y]\n---\n\nline 1\n\nline 3\n");
    expect({ ...file.data }).toEqual({ a: 1, b: ["x", "y"] });
    expect(file.body).toBe("line 1\n\nline 3");
  });

  test("written and read back, the body comes back byte for byte, blank lines at either end included", () => {
    for (const body of ["", "x", "\nstarts blank", "ends blank\n", "a\n---\nb", "unicode ☕ ü", "  indented"]) {
      expect(readFrontmatter(writeFrontmatter({ k: "v" }, body)).body).toBe(body);
    }
  });

  test("a BOM and CRLF line ends are read; '...' closes the frontmatter too", () => {
    const file = readFrontmatter("\uFEFF---\r\nfrom: x\r\n...\r\n\r\nhi\r\n");
    expect(file.data.from).toBe("x");
    expect(file.body).toBe("hi");
  });

  test("what YAML 1.1 readers would misread is quoted; reading gives back the same strings", () => {
    const data = { a: "no", b: "on", c: "2024-01-28T15:30:00Z", d: "1", e: "null", f: "# not a comment", g: "plain text" };
    const text = writeFrontmatter(data, "");
    expect(text).toContain('a: "no"');
    expect(text).toContain('c: "2024-01-28T15:30:00Z"');
    expect(text).toContain('d: "1"');
    expect(text).toContain("g: plain text");
    expect({ ...readFrontmatter(text).data }).toEqual(data);
  });

  test("no frontmatter, no closing line, bad YAML, duplicate keys, a list, tags and binary are each malformed", () => {
    expect(reason(() => readFrontmatter("just text\n"))).toContain("does not start with a '---'");
    expect(reason(() => readFrontmatter("---\na: 1\n"))).toContain("no closing '---'");
    expect(reason(() => readFrontmatter("---\na: [1\n---\n"))).toContain("not valid YAML");
    expect(reason(() => readFrontmatter("---\na: 1\na: 2\n---\n"))).toContain("not valid YAML");
    expect(reason(() => readFrontmatter("---\n- a\n- b\n---\n"))).toContain("not a map");
    expect(reason(() => readFrontmatter("---\n---\n"))).toContain("not a map");
    expect(reason(() => readFrontmatter("---\na: !custom x\n---\n"))).toContain("not valid YAML");
    expect(reason(() => readFrontmatter("---\na: !!binary aGVsbG8=\n---\n"))).toContain("not plain YAML data");
    expect(reason(() => readFrontmatter("---\na: .inf\n---\n"))).toContain("not a finite number");
  });

  test("a __proto__ key is a key like any other: nothing is polluted", () => {
    const file = readFrontmatter("---\n__proto__: {polluted: yes}\nfrom: x\n---\n");
    expect(Object.keys(file.data)).toEqual(["__proto__", "from"]);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  test("whatever the YAML library throws is a Malformed with its reason; a plain alias still reads", () => {
    for (const { yaml, reason: why } of Object.values(HOSTILE_YAML))
      expect(reason(() => readFrontmatter(`---\n${yaml}\n---\n`))).toContain(why);
    const shared = readFrontmatter("---\nbase: &b {a: 1}\nx: *b\ny: [*b, *b]\n---\n").data;
    expect(JSON.parse(JSON.stringify(shared))).toEqual({ base: { a: 1 }, x: { a: 1 }, y: [{ a: 1 }, { a: 1 }] });
    const aliases = ["a: &a 1", ...Array.from({ length: 101 }, (_, i) => `k${i}: *a`)].join("\n");
    expect(reason(() => readFrontmatter(`---\n${aliases}\n---\n`))).toContain("it has more than 100 aliases");
    expect(reason(() => readFrontmatter("---\n? [a, b]\n: 1\n---\n"))).toContain("a key is a list, a map or an alias");
  });

  test("frontmatter is at most 64 KiB; a duplicate key is found among thousands", () => {
    const big = `---\nx: ${"a".repeat(64 * 1024)}\n---\nbody\n`;
    expect(reason(() => readFrontmatter(big))).toBe("its frontmatter is 65539 bytes, over the 65536-byte limit");
    const keys = Array.from({ length: 6000 }, (_, i) => `k${i}: v`);
    expect(Object.keys(readFrontmatter(`---\n${keys.join("\n")}\n---\n`).data)).toHaveLength(6000);
    expect(reason(() => readFrontmatter(`---\n${keys.join("\n")}\nk17: again\n---\n`))).toContain("the key 'k17' appears twice");
  });

  test("an alias bomb is refused, not expanded", () => {
    const lines = ["a: &a [x, x, x, x, x, x, x, x, x, x]"];
    for (let i = 0; i < 8; i++) {
      const [name, previous] = [String.fromCharCode(98 + i), String.fromCharCode(97 + i)];
      lines.push(`${name}: &${name} [${Array(10).fill(`*${previous}`).join(", ")}]`);
    }
    expect(() => readFrontmatter(`---\n${lines.join("\n")}\n---\n`)).toThrow();
  });
});

describe("frontmatter values", () => {
  test("booleans accept YAML 1.1 words; lists accept one text; times must be ISO 8601", () => {
    expect(optionalBoolean({ a: "yes" }, "a")).toBe(true);
    expect(optionalBoolean({ a: "no" }, "a")).toBe(false);
    expect(optionalBoolean({ a: null }, "a")).toBeUndefined();
    expect(reason(() => optionalBoolean({ a: "maybe" }, "a"))).toContain("true or false");
    expect(optionalTextList({ t: "fugue" }, "t")).toEqual(["fugue"]);
    expect(optionalTextList({ t: [7, "x"] }, "t")).toEqual(["7", "x"]);
    expect(reason(() => optionalTextList({ t: [{}] }, "t"))).toContain("list of texts");
    expect(requiredTime({ t: "2024-01-28T15:30:00+01:00" }, "t")).toBe("2024-01-28T14:30:00.000Z");
    expect(reason(() => requiredTime({ t: "yesterday" }, "t"))).toContain("not an ISO 8601 time");
    expect(reason(() => requiredTime({ t: "2024-13-45T99:00:00Z" }, "t"))).toContain("not an ISO 8601 time");
  });
});

describe("FEAT-124", () => {
  test("the seed's example parses with every field", () => {
    const message = parseFeat124(fixture("feat124-status.md"));
    expect(message).toEqual({
      from: "worker-bug-069",
      to: "orchestrator",
      type: "status",
      timestamp: "2024-01-28T15:30:00.000Z",
      needs_response: false,
      priority: "normal",
      tags: ["BUG-069", "fugue"],
      in_reply_to: undefined,
      thread_id: undefined,
      subject: undefined,
      other: undefined,
      body: expect.stringMatching(/^## Status Update\n\nBUG-069 investigation complete\.[\s\S]*Ready for review and merge\.$/),
    });
  });

  test("written back and read again it is the same message, with the seed's timestamp form", () => {
    const message = parseFeat124(fixture("feat124-status.md"));
    const text = formatFeat124(message);
    expect(text).toContain('timestamp: "2024-01-28T15:30:00Z"');
    expect(parseFeat124(text)).toEqual(message);
  });

  test("each required field (from, to, type, timestamp) missing is named", () => {
    const text = fixture("feat124-status.md");
    for (const field of ["from", "to", "type", "timestamp"]) {
      const without = text.replace(new RegExp(`^${field}:.*\\n`, "m"), "");
      expect(reason(() => parseFeat124(without))).toBe(`required field '${field}' is missing or empty`);
    }
  });

  test("keys FEAT-124 does not define are kept as they were", () => {
    const text = fixture("feat124-status.md").replace("priority: normal\n", "priority: normal\nsession: fugue-3\nweight: 2\n");
    const message = parseFeat124(text);
    expect(message.other).toEqual({ session: "fugue-3", weight: 2 });
    expect(formatFeat124(message)).toContain("session: fugue-3\nweight: 2\n");
  });

  test("file names follow the seed's convention; the n-th same name sorts after the earlier ones", () => {
    const message = { timestamp: "2024-01-28T15:30:00.000Z", from: "worker-bug-069", type: "status" };
    expect(feat124FileName(message)).toBe("2024-01-28T15-30-00_worker-bug-069_status.md");
    const names = [1, 2, 3, 10, 11].map((n) => feat124FileName(message, n));
    expect(names[1]).toBe("2024-01-28T15-30-00_worker-bug-069_status_0002.md");
    expect([...names].sort()).toEqual(names);
    expect(names.every((name) => name > "2024-01-28T15-30-00_worker-bug-069_statu" && name < "2024-01-28T15-30-01")).toBe(true);
  });

  test("a sender name with '/', '%' or control characters stays inside one file name", () => {
    const name = feat124FileName({ timestamp: "2024-01-28T15:30:00.000Z", from: "../../etc/x%\n", type: "task" });
    expect(name).toBe("2024-01-28T15-30-00_..%2F..%2Fetc%2Fx%25%0A_task.md");
    expect(name.includes("/")).toBe(false);
    expect(fileNamePiece("wörker 8 ☕")).toBe("wörker 8 ☕");
    expect(new TextEncoder().encode(fileNamePiece("é".repeat(100))).length).toBeLessThanOrEqual(80);
  });
});

describe("Roo", () => {
  test("the seed's example parses with every field", () => {
    const message = parseRoo(fixture("roo-to-tester.md"));
    const fields = { from: "nestjs-developer", timestamp: "2025-07-07T11:15:00.000Z", id: "msg-a4b1c9e0", priority: "high" };
    expect(message).toMatchObject(fields);
    expect(message.body.startsWith("**Request: Integration Test**\n\nPlease run integration tests")).toBe(true);
    expect(message.body.endsWith("Reference Decision Log: `ADR-004`.")).toBe(true);
    expect(parseRoo(formatRoo(message))).toEqual(message);
  });

  test("from, timestamp and id are required", () => {
    const text = fixture("roo-to-tester.md");
    for (const field of ["from", "timestamp", "id"]) {
      expect(reason(() => parseRoo(text.replace(new RegExp(`^${field}:.*\\n`, "m"), "")))).toContain(`'${field}'`);
    }
  });

  test("file names are to-<slug>.md", () => {
    expect(rooSlugOf("to-tester.md")).toBe("tester");
    expect(rooSlugOf("to-nestjs developer.md")).toBe("nestjs developer");
    expect(rooSlugOf("from-tester.md")).toBeNull();
    expect(rooSlugOf("to-.md")).toBeNull();
    expect(rooFileName("architect")).toBe("to-architect.md");
  });
});

describe("D-Mail", () => {
  test("the seed's example parses and passes the v1 schema", () => {
    const message = parseDmail(fixture("dmail-report-my-42.md"));
    expect(message.frontmatter).toEqual({
      name: "report-my-42",
      kind: "report",
      description: "Expedition #1 completed implement for MY-42",
      issues: ["MY-42"],
      severity: undefined,
      targets: undefined,
      metadata: undefined,
      "dmail-schema-version": "1",
    });
    expect(message.body.startsWith("# Expedition #1 Report: Fix login bug\n\n- **Issue:** MY-42")).toBe(true);
    expect(parseDmail(formatDmail(message))).toEqual(message);
    expect(dmailFileName("report-my-42")).toBe("report-my-42.md");
  });

  test("the schema: required fields, the version string, kinds, severity, lists, metadata, no other key", () => {
    const ok = { "dmail-schema-version": "1", name: "spec-1", kind: "specification", description: "d" };
    expect(validateDmail({ ...ok }).name).toBe("spec-1");
    for (const key of ["dmail-schema-version", "name", "kind", "description"]) {
      const without: Record<string, unknown> = { ...ok };
      delete without[key];
      expect(reason(() => validateDmail(without))).toBe(`D-Mail is missing required field '${key}'`);
    }
    expect(reason(() => validateDmail({ ...ok, "dmail-schema-version": 1 }))).toContain('must be the string "1"');
    expect(reason(() => validateDmail({ ...ok, "dmail-schema-version": "2" }))).toContain('must be the string "1"');
    expect(reason(() => validateDmail({ ...ok, name: "" }))).toContain("non-empty string");
    expect(reason(() => validateDmail({ ...ok, name: "../x" }))).toContain("cannot be a file name");
    expect(reason(() => validateDmail({ ...ok, kind: "memo" }))).toContain("kind must be one of");
    expect(reason(() => validateDmail({ ...ok, description: 5 }))).toContain("'description' must be a string");
    expect(reason(() => validateDmail({ ...ok, severity: "critical" }))).toContain("severity must be one of low, medium, high");
    expect(validateDmail({ ...ok, severity: "HIGH" }).severity).toBe("HIGH");
    expect(reason(() => validateDmail({ ...ok, issues: ["MY-1", ""] }))).toContain("'issues' must be a list");
    expect(reason(() => validateDmail({ ...ok, targets: "x" }))).toContain("'targets' must be a list");
    expect(reason(() => validateDmail({ ...ok, metadata: ["a"] }))).toContain("metadata must be a map");
    expect(reason(() => validateDmail({ ...ok, metadata: { a: 1 } }))).toContain("values must be strings");
    expect(reason(() => validateDmail({ ...ok, from: "x" }))).toBe("D-Mail field 'from' is not in the v1 schema");
    for (const kind of ["report", "specification", "feedback", "design-feedback", "implementation-feedback", "convergence"]) {
      expect(validateDmail({ ...ok, kind }).kind).toBe(kind);
    }
  });

  test("agentmail refuses to write a D-Mail the schema refuses", () => {
    const message = parseDmail(fixture("dmail-report-my-42.md"));
    expect(() => formatDmail({ ...message, frontmatter: { ...message.frontmatter, kind: "memo" } })).toThrow(Malformed);
  });
});

describe("peer names", () => {
  test("plain names, spaces and Unicode pass; anything that could leave the directory or hide does not", () => {
    for (const name of ["worker-7", "wörker 8", "Zoë dev ☕", "a.b"]) expect(peerNameProblem(name)).toBeNull();
    expect(peerNameProblem("")).toBe("it is empty");
    expect(peerNameProblem("..")).toContain("not a name");
    expect(peerNameProblem("../x")).toContain("'/'");
    expect(peerNameProblem("a\\b")).toContain("'/'");
    expect(peerNameProblem("a\nb")).toContain("control character");
    expect(peerNameProblem(".hidden")).toContain("starts with '.'");
    expect(peerNameProblem("x".repeat(201))).toContain("over 200 bytes");
    expect(() => checkPeerName("../x", "FEAT-124 mailbox name")).toThrow(AgentmailError);
  });

  test("outbound types: D-Mail kinds only for dmail addresses; priorities from the list", () => {
    expect(checkOutboundFields("dmail", { type: "design-feedback" }).type).toBe("design-feedback");
    expect(() => checkOutboundFields("feat124", { type: "design-feedback" })).toThrow("unknown type");
    expect(() => checkOutboundFields("roo", { priority: "asap" })).toThrow("unknown priority");
    expect(checkOutboundFields("roo", { type: "task", priority: "urgent" })).toEqual({ type: "task", priority: "urgent" });
  });
});
