/** The message read from stdin by `send`: one trailing newline dropped, and the limit named as it is: 262,144 bytes. */
import { afterEach, beforeEach, describe, expect, test } from "bun:test";
import { closeSync, mkdtempSync, openSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { readMessageFromStdin } from "../../../src/commands/_mail-flags.ts";
import { MAX_MESSAGE_BYTES } from "../../../src/mail/message.ts";

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "agentmail-stdin-"));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

function read(content: string | Uint8Array): string {
  const path = join(dir, `in-${Math.random()}`);
  writeFileSync(path, content);
  const fd = openSync(path, "r");
  try {
    return readMessageFromStdin(fd);
  } finally {
    closeSync(fd);
  }
}

describe("send's message from stdin", () => {
  test("a message at the limit, with its trailing newline, is taken without the newline", () => {
    expect(read("x".repeat(MAX_MESSAGE_BYTES) + "\n")).toBe("x".repeat(MAX_MESSAGE_BYTES));
  });

  test("more than the limit is refused naming 262,144 bytes, not the one byte more that is read", () => {
    const refusal = "the message on stdin is over the 262,144-byte limit; send a path to a file instead";
    expect(() => read("x".repeat(MAX_MESSAGE_BYTES + 2))).toThrow(refusal);
  });

  test("other failures pass unchanged", () => {
    expect(() => read(new Uint8Array([0xff, 0x41]))).toThrow(/not valid UTF-8/);
  });
});
