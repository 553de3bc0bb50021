import { afterEach, beforeEach, describe, expect, test } from "bun:test";
import { closeSync, mkdtempSync, openSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { AgentmailError } from "../../../src/mail/errors.ts";
import { readStdin, stdinIsPiped } from "../../../src/input/stdin.ts";
import { discards, fdSink, printJson, printJsonArray, setSink, writeAll, writeStderr, writeStdout } from "../../../src/output/streams.ts";

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "agentmail-io-"));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

function fdOf(content: string | Uint8Array): number {
  const path = join(dir, `in-${Math.random()}`);
  writeFileSync(path, content);
  return openSync(path, "r");
}

describe("reading a message from stdin", () => {
  test("reads everything, in UTF-8", () => {
    const fd = fdOf("héllo\nwörld\n");
    expect(readStdin(1024, fd)).toBe("héllo\nwörld\n");
    closeSync(fd);
  });

  test("refuses more than the limit, and invalid UTF-8", () => {
    const big = fdOf("x".repeat(2000));
    expect(() => readStdin(1000, big)).toThrow(/over the 1000-byte limit/);
    const invalid = fdOf(new Uint8Array([0xff, 0xfe, 0x41]));
    expect(() => readStdin(1000, invalid)).toThrow(/not valid UTF-8/);
    closeSync(big);
    closeSync(invalid);
  });

  test("a file is piped input; a closed descriptor is none", async () => {
    const fd = fdOf("x");
    expect(await stdinIsPiped(fd)).toBe(true);
    closeSync(fd);
    expect(await stdinIsPiped(fd)).toBe(false);
    expect(() => readStdin(10, fd)).toThrow(AgentmailError);
  });
});

describe("output streams", () => {
  test("a long text is written a piece at a time, byte for byte, a character that needs two UTF-16 units never split", () => {
    const out = join(dir, "long");
    // Past several pieces, with four-byte characters (surrogate pairs) and others all along, at every offset.
    let text = "";
    for (let i = 0; text.length < 300_000; i++) text += i % 5 === 0 ? "🦓" : i % 7 === 0 ? "é" : "x".repeat(i % 3);
    for (const shift of [0, 1, 2, 3]) {
      const fd = openSync(out, "w");
      writeAll(fd, "y".repeat(shift) + text);
      closeSync(fd);
      expect(readFileSync(out).equals(Buffer.from("y".repeat(shift) + text))).toBe(true);
    }
  });

  test("a descriptor sink writes everything; a closed stdout is an error, a closed stderr is not", () => {
    const out = join(dir, "out");
    const err = join(dir, "err");
    const outFd = openSync(out, "w");
    const errFd = openSync(err, "w");
    const sink = fdSink(outFd, errFd);
    sink.stdout("data ".repeat(20_000));
    sink.stderr("diagnostic\n");
    closeSync(outFd);
    closeSync(errFd);
    expect(readFileSync(out, "utf8").length).toBe(100_000);
    expect(readFileSync(err, "utf8")).toBe("diagnostic\n");
    expect(() => sink.stdout("lost")).toThrow(/could not write to stdout \(EBADF\)/);
    expect(() => sink.stderr("lost")).not.toThrow();
    expect(() => writeAll(outFd, "x")).toThrow();
  });

  test("the swappable sink carries stdout, stderr and JSON", () => {
    const seen: string[] = [];
    setSink({ stdout: (text) => void seen.push(`out:${text}`), stderr: (text) => void seen.push(`err:${text}`) });
    try {
      writeStdout("a\n");
      writeStderr("b\n");
      printJson({ c: 1 });
    } finally {
      setSink(null);
    }
    expect(seen).toEqual(["out:a\n", "err:b\n", 'out:{"c":1}\n']);
  });

  test("an array printed a batch at a time is the document printJson prints of the whole", async () => {
    const printed = async (print: () => void | Promise<void>) => {
      let out = "";
      setSink({ stdout: (text) => void (out += text), stderr: () => {} });
      try {
        await print();
      } finally {
        setSink(null);
      }
      return out;
    };
    async function* batches(...each: unknown[][]) {
      for (const batch of each) yield batch;
    }
    const items = [{ a: 1 }, { b: "\u0085 and \u202e" }, { c: [1, 2] }];
    const whole = await printed(() => printJson(items));
    expect(await printed(() => printJsonArray(batches(items.slice(0, 1), [], items.slice(1))))).toBe(whole);
    expect(await printed(() => printJsonArray(batches([], [])))).toBe("[]\n");
    expect(await printed(() => printJsonArray(batches()))).toBe(await printed(() => printJson([])));
  });

  test("a stream on /dev/null discards, a file does not", () => {
    const nullFd = openSync("/dev/null", "w");
    expect(discards(nullFd)).toBe(true);
    closeSync(nullFd);
    const fileFd = openSync(join(dir, "f"), "w");
    expect(discards(fileFd)).toBe(false);
    closeSync(fileFd);
    expect(discards(fileFd)).toBe(true);
  });
});
