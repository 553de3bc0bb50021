/** The file store's one FNV-1a (src/store/file/fnv1a.ts): its values are kept in files, so they are pinned here. */
import { describe, expect, test } from "bun:test";
import { fnv1a, fnv1aOfText } from "../../../../src/store/file/fnv1a.ts";

const bytes = (text: string) => new TextEncoder().encode(text);

describe("fnv1a", () => {
  test("the published 32-bit FNV-1a values, over bytes and over text alike", () => {
    const known: [string, number][] = [
      ["", 0x811c9dc5],
      ["a", 0xe40c292c],
      ["foobar", 0xbf9cf968],
    ];
    for (const [text, value] of known) {
      expect(fnv1a(bytes(text))).toBe(value);
      expect(fnv1aOfText(text)).toBe(value);
    }
  });

  test("a range of bytes hashes as those bytes alone", () => {
    expect(fnv1a(bytes("[foobar]"), 1, 7)).toBe(fnv1a(bytes("foobar")));
  });
});
