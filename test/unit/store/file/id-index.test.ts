/** The ids a receive passes are looked up by their bytes, wherever those bytes sit, however many there are. */
import { describe, expect, test } from "bun:test";
import { PassedIds } from "../../../../src/store/file/id-index.ts";

const bytesOf = (text: string) => new TextEncoder().encode(text);

describe("PassedIds", () => {
  test("finds an id given as other bytes at another offset, and nothing it was not given", () => {
    const passed = new PassedIds();
    const region = bytesOf('{"id":"AAAA0001"} {"id":"AAAA0002"}');
    passed.add(region.subarray(6, 16));
    passed.add(null);
    expect(passed.has(bytesOf('"AAAA0001"'))).toBe(true);
    expect(passed.has(region.subarray(24, 34))).toBe(false);
    expect(passed.has(bytesOf('"AAAA000"'))).toBe(false);
    expect(passed.ids).toHaveLength(1);
  });

  test("with thousands of ids, each is found and no other is", () => {
    const passed = new PassedIds();
    for (let n = 0; n < 5000; n++) passed.add(bytesOf(`"${n.toString(36).padStart(8, "0")}"`));
    for (let n = 0; n < 5000; n++) expect(passed.has(bytesOf(`"${n.toString(36).padStart(8, "0")}"`))).toBe(true);
    for (let n = 5000; n < 6000; n++) expect(passed.has(bytesOf(`"${n.toString(36).padStart(8, "0")}"`))).toBe(false);
  });
});
