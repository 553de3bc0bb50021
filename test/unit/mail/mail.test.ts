import { describe, expect, test } from "bun:test";
import { AgentmailError, toAgentmailError } from "../../../src/mail/errors.ts";
import { formatMessage } from "../../../src/mail/format.ts";
import { isId, newId } from "../../../src/mail/ids.ts";
import { createMessage, findReadFlag, MAX_MESSAGE_BYTES, parseMessage, serializeMessage, validateBody } from "../../../src/mail/message.ts";
import { decodeName, displayName, encodeName } from "../../../src/mail/names.ts";
import { closestNames, unquotedRecipient } from "../../../src/mail/suggest.ts";

const bytes = (text: string) => new TextEncoder().encode(text);

describe("ids", () => {
  test("are 8 base62 characters and do not repeat", () => {
    const ids = new Set(Array.from({ length: 5000 }, newId));
    expect(ids.size).toBe(5000);
    for (const id of ids) expect(isId(id)).toBe(true);
  });
});

describe("names", () => {
  test("plain names stay readable", () => {
    expect(encodeName("reviewer")).toBe("reviewer");
    expect(encodeName("agent-1.b_c")).toBe("agent-1.b_c");
  });

  test("hostile names cannot leave the store or hide", () => {
    for (const name of ["..", ".", "../evil", "a/b", ".hidden", "x\u0000y", "a\nb", "%41", "ünï cödé", "C:\\x"]) {
      const encoded = encodeName(name);
      expect(encoded).not.toContain("/");
      expect(encoded).not.toContain("\\");
      expect(encoded.startsWith(".")).toBe(false);
      expect(decodeName(encoded)).toBe(name);
    }
  });

  test("decoding accepts only canonical stems", () => {
    expect(decodeName("%61")).toBeNull();
    expect(decodeName("%zz")).toBeNull();
    expect(decodeName("bob%20smith")).toBe("bob smith");
  });

  test("empty and overlong names are refused", () => {
    expect(() => encodeName("")).toThrow(AgentmailError);
    expect(() => encodeName("é".repeat(100))).toThrow(/too long/);
  });

  test("display escapes control characters so one name is one line", () => {
    expect(displayName("a\nb\tc\u0001")).toBe("a\\nb\\tc\\x01");
    expect(displayName("bob smith")).toBe("bob smith");
  });
});

describe("messages", () => {
  test("serialize to one line with the seed's fields in order", () => {
    const message = createMessage("alice", "bob", "line1\nline2\u2028", new Date("2026-01-02T03:04:05Z"));
    const line = serializeMessage(message);
    expect(line.endsWith("\n")).toBe(true);
    expect(line.slice(0, -1)).not.toContain("\n");
    expect(Object.keys(JSON.parse(line))).toEqual(["id", "from", "to", "message", "read_flag", "created_at"]);
    expect(parseMessage(line)).toEqual(message);
  });

  test("parse rejects lines that are not messages", () => {
    for (const line of [
      "",
      "{",
      "[]",
      "null",
      '{"id":"x"}',
      '{"id":1,"from":"a","message":"m","read_flag":false}',
      '{"id":"x","from":"a","to":3,"message":"m","read_flag":false}',
    ]) {
      expect(parseMessage(line)).toBeNull();
    }
    expect(parseMessage('{"id":"x","from":"a","message":"m","read_flag":true,"extra":{"k":1}}')?.extra).toEqual({ k: 1 });
  });

  test("the read flag is found only at the top level, never inside strings or nested objects", () => {
    const tricky = '{"message":"\\"read_flag\\":false","nested":{"read_flag":false},"read_flag" :  false}';
    const flag = findReadFlag(bytes(tricky), 0, tricky.length);
    expect(flag).toEqual({ offset: tricky.lastIndexOf("false"), read: false });
    const read = '{"id":"a","read_flag":true }';
    expect(findReadFlag(bytes(read), 0, read.length)).toEqual({ offset: read.indexOf("true"), read: true });
    expect(findReadFlag(bytes('{"read_flag":null}'), 0, 18)).toBeNull();
    expect(findReadFlag(bytes('{"a":1}'), 0, 7)).toBeNull();
  });

  test("offsets are byte offsets even after multi-byte characters", () => {
    const line = serializeMessage(createMessage("ä", "ö", "日本語 🎉"));
    const encoded = bytes(line);
    const flag = findReadFlag(encoded, 0, encoded.length)!;
    expect(new TextDecoder().decode(encoded.subarray(flag.offset, flag.offset + 5))).toBe("false");
  });

  test("bodies must be non-blank and within the limit", () => {
    expect(() => validateBody("   \n")).toThrow(/empty/);
    expect(() => validateBody("x".repeat(MAX_MESSAGE_BYTES + 1))).toThrow(/limit/);
    expect(validateBody("ok")).toBe("ok");
  });

  test("the receive format is the seed's", () => {
    const message = createMessage("alice", "bob", "hi");
    expect(formatMessage(message)).toBe(`From: alice\nID: ${message.id}\n\n> hi\n`);
  });
});

describe("suggestions", () => {
  test("the closest names come first", () => {
    expect(closestNames("reviewr", ["alice", "reviewer", "builder"])[0]).toBe("reviewer");
    expect(closestNames("REV", ["alice", "reviewer"])[0]).toBe("reviewer");
    expect(closestNames("x", [], 3)).toEqual([]);
  });

  test("a swap of two letters is one edit", () => {
    expect(closestNames("sned", ["send", "status"])).toEqual(["send"]);
    expect(closestNames("recieve", ["receive", "recipients"])).toEqual(["receive"]);
  });

  test("nothing is suggested when every candidate is far, and an empty name is never suggested", () => {
    expect(closestNames("version", ["send", "receive", "recipients", "status", "onboard", "cleanup", "mailman", "mcp", "hooks"])).toEqual(
      [],
    );
    expect(closestNames("z", ["c", "m"])).toEqual([]);
    expect(closestNames("a", ["", "b"])).toEqual([]);
    expect(closestNames("", ["", "alice"])).toEqual([]);
  });

  test("the words a send left unquoted: the longest leading run that names a recipient", () => {
    expect(unquotedRecipient(["carol", "x", "hi"], ["alice", "carol x"])).toBe("carol x");
    expect(unquotedRecipient(["carol", "x", "y"], ["carol x", "carol x y"])).toBe("carol x y");
    expect(unquotedRecipient(["carol", "hello", "world"], ["carol"])).toBeNull();
  });
});

describe("errors", () => {
  test("carry exit codes: 2 for tmux, 1 for the rest", () => {
    expect(new AgentmailError("not_in_tmux", "x").exitCode).toBe(2);
    expect(new AgentmailError("usage", "x").exitCode).toBe(1);
    const io = Object.assign(new Error("EACCES: denied"), { code: "EACCES" });
    expect(toAgentmailError(io).code).toBe("io");
    expect(toAgentmailError("boom").code).toBe("internal");
  });
});
