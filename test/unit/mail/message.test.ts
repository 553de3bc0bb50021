/**
 * scanLine finds a line's read flag and id with native searches for quotes and backslashes (a byte loop costs start-up
 * time in a short process). It must find exactly what the byte walk it replaced found, on any bytes: checked here
 * against that walk, on random lines and on regions of many lines scanned in and out of order.
 */
import { describe, expect, test } from "bun:test";
import { createMessage, OnePerId, scanLine, standsForId, type LineScan, type Message } from "../../../src/mail/message.ts";

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const COLON = 0x3a;
const encoder = new TextEncoder();
const decoder = new TextDecoder();

/** The byte walk scanLine used before: one byte at a time. */
function walkedScan(bytes: Uint8Array, start: number, end: number, allKeys: boolean): LineScan {
  let escapedString = false;
  const stringEnd = (at: number) => {
    escapedString = false;
    let i = at + 1;
    while (i < end) {
      if (bytes[i] === QUOTE) break;
      if (bytes[i] === BACKSLASH) {
        escapedString = true;
        i += 2;
      } else i++;
    }
    return i;
  };
  const isSpace = (byte: number | undefined) => byte === 0x20 || byte === 0x09 || byte === 0x0d || byte === 0x0a;
  const keyText = (open: number, close: number, escaped: boolean) => {
    const raw = decoder.decode(bytes.subarray(open, close + 1));
    if (!escaped) return raw;
    try {
      return JSON.stringify(JSON.parse(raw) as string);
    } catch {
      return raw;
    }
  };
  const at = (offset: number, text: string) =>
    decoder.decode(bytes.subarray(offset, Math.min(bytes.length, offset + text.length))) === text;
  let depth = 0;
  let flag: LineScan["flag"] = null;
  let flags = 0;
  let ids = 0;
  let idStart = -1;
  let idEnd = -1;
  let idEscaped = false;
  let duplicateKey: string | null = null;
  let keyCount = 0;
  let moves = 0;
  let movesGiven = 0;
  const keys = new Set<string>();
  let i = start;
  while (i < end) {
    const byte = bytes[i]!;
    if (byte !== QUOTE) {
      if (byte === 0x7b || byte === 0x5b) depth++;
      else if (byte === 0x7d || byte === 0x5d) depth--;
      i++;
      continue;
    }
    const open = i;
    const close = stringEnd(open);
    i = close + 1;
    if (depth !== 1) continue;
    let j = i;
    while (j < end && isSpace(bytes[j])) j++;
    if (bytes[j] !== COLON) continue;
    j++;
    while (j < end && isSpace(bytes[j])) j++;
    keyCount++;
    const escaped = escapedString;
    const key = keyText(open, close, escaped);
    if (allKeys) {
      if (keys.has(key)) duplicateKey ??= key;
      keys.add(key);
    }
    if (key === '"read_flag"') {
      flags++;
      flag = at(j, "false") ? { offset: j, read: false } : at(j, "true") ? { offset: j, read: true } : null;
      if (flags === 2) duplicateKey ??= '"read_flag"';
    } else if (key === '"id"') {
      ids++;
      if (ids === 2) duplicateKey ??= '"id"';
      if (bytes[j] === QUOTE) {
        idStart = j;
        idEnd = stringEnd(j) + 1;
        idEscaped = escapedString;
      } else idStart = idEnd = -1;
    } else if (key === '"moves"') {
      movesGiven++;
      if (movesGiven === 2) duplicateKey ??= '"moves"';
      // A plain count: digits, no leading zero, at most 15, then the end of the value.
      const digits = /^(0|[1-9][0-9]{0,14})(?=[,} \t\r\n])/.exec(decoder.decode(bytes.subarray(j, end)));
      moves = digits ? Number(digits[1]) : -1;
    }
  }
  if (flags > 1 || ids > 1 || movesGiven > 1 || moves < 0) {
    return { flag: null, idStart: -1, idEnd: -1, idEscaped: false, duplicateKey, moves: 0, keys: keyCount };
  }
  return { flag, idStart, idEnd, idEscaped, duplicateKey, moves, keys: keyCount };
}

/** A seeded generator, so a failure can be replayed. */
function random(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (Math.imul(state, 1664525) + 1013904223) >>> 0;
    return state / 2 ** 32;
  };
}

const PIECES = [
  '"',
  "\\",
  '\\"',
  "\\\\",
  "a",
  " ",
  "read_flag",
  "id",
  "moves",
  "{",
  "}",
  "[",
  "]",
  ":",
  ",",
  "false",
  "true",
  "é",
  "\\u0069d",
  "0",
  "07",
  "12",
];

function randomLine(next: () => number): string {
  const pick = <T>(items: T[]) => items[Math.floor(next() * items.length)]!;
  if (next() < 0.3) {
    // Garbage: any sequence of the pieces.
    return Array.from({ length: Math.floor(next() * 30) }, () => pick(PIECES)).join("");
  }
  const text = () => Array.from({ length: Math.floor(next() * 6) }, () => pick(PIECES)).join("");
  const value = (): unknown => {
    const kind = next();
    if (kind < 0.4) return text();
    if (kind < 0.55) return next() < 0.5;
    if (kind < 0.7) return { [pick(["read_flag", "id", text()])]: pick([true, false, text()]) };
    if (kind < 0.8) return [text(), next() < 0.5];
    return Math.floor(next() * 100);
  };
  const entries: string[] = [];
  const count = 1 + Math.floor(next() * 6);
  for (let k = 0; k < count; k++) {
    const key = pick(["read_flag", "id", "read_flag", "message", "from", "moves", text()]);
    const keyJson = next() < 0.1 && key === "id" ? '"\\u0069d"' : JSON.stringify(key);
    const space = pick(["", " ", "  ", "\t"]);
    entries.push(`${keyJson}${space}:${pick(["", " "])}${JSON.stringify(value())}`);
  }
  const line = `{${entries.join(pick([",", ", "]))}}`;
  // Sometimes torn: cut anywhere.
  return next() < 0.15 ? line.slice(0, Math.floor(next() * line.length)) : line;
}

describe("scanLine finds what the byte walk found", () => {
  test("on 20,000 random lines, each scanned alone", () => {
    const next = random(1);
    for (let n = 0; n < 20_000; n++) {
      const bytes = encoder.encode(randomLine(next));
      for (const allKeys of [false, true]) {
        expect({ n, scan: scanLine(bytes, 0, bytes.length, allKeys) }).toEqual({ n, scan: walkedScan(bytes, 0, bytes.length, allKeys) });
      }
    }
  });

  test("on regions of many lines, scanned in order, backwards and twice", () => {
    const next = random(2);
    for (let region = 0; region < 300; region++) {
      const lines = Array.from({ length: 1 + Math.floor(next() * 40) }, () => randomLine(next).replaceAll("\n", " "));
      const bytes = encoder.encode(lines.join("\n") + "\n");
      const bounds: [number, number][] = [];
      for (let start = 0; start < bytes.length; ) {
        const end = bytes.indexOf(0x0a, start);
        bounds.push([start, end]);
        start = end + 1;
      }
      for (const order of [bounds, [...bounds].reverse(), bounds]) {
        for (const [start, end] of order) {
          const expected = { region, start, scan: walkedScan(bytes, start, end, true) };
          expect({ region, start, scan: scanLine(bytes, start, end, true) }).toEqual(expected);
        }
      }
    }
  });

  test("a backslash as the last byte of a line, and escaped quotes before the end of a key", () => {
    for (const line of ['{"a":"x\\', '{"read_flag\\":false}', '{"id":"a\\"b","read_flag":false}', '{"x\\\\":1,"read_flag":true}']) {
      const bytes = encoder.encode(line);
      expect(scanLine(bytes, 0, bytes.length, true)).toEqual(walkedScan(bytes, 0, bytes.length, true));
    }
  });
});

describe("one record per id: the copy moved most, else the first", () => {
  const copy = (body: string, moves?: number): Message => ({
    ...createMessage("alice", "bob", body),
    id: "Same0001",
    ...(moves ? { moves } : {}),
  });

  test("a copy stands for its id when none is held, or when it was moved more than the one held", () => {
    expect(standsForId(copy("first"), undefined)).toBe(true);
    expect(standsForId(copy("again"), 0)).toBe(false);
    expect(standsForId(copy("moved", 1), 0)).toBe(true);
    expect(standsForId(copy("moved as often", 1), 1)).toBe(false);
    expect(standsForId(copy("moved less", 1), 2)).toBe(false);
  });

  test("OnePerId keeps that record, in the place of the id's first", () => {
    const kept = new OnePerId<{ message: Message }>();
    const other = { message: { ...createMessage("alice", "bob", "other"), id: "Other001" } };
    for (const message of [copy("first"), other.message, copy("repeat"), copy("moved", 2), copy("moved less", 1)]) kept.add({ message });
    expect(kept.records.map((record) => record.message.message)).toEqual(["moved", "other"]);
  });
});
