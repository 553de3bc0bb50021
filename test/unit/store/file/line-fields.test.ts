/**
 * A line's fields from its bytes (src/store/file/line-fields.ts): the one condition of the byte fast path (a plain
 * line), and the one base-62 decoding of ids, from text and from a line's bytes.
 */
import { describe, expect, test } from "bun:test";
import { idNumber, idNumberOfBytes, LineIds, madeIdValue, PlainLines } from "../../../../src/store/file/line-fields.ts";

describe("madeIdValue", () => {
  test("eight base-62 digits are their value plus one, exact; anything else is 0", () => {
    expect(madeIdValue("00000000")).toBe(1);
    expect(madeIdValue("00000010")).toBe(63);
    expect(madeIdValue("0000000A")).toBe(11);
    expect(madeIdValue("0000000a")).toBe(37);
    expect(madeIdValue("zzzzzzzz")).toBe(62 ** 8);
    for (const id of ["", "0000000", "000000000", "0000000-", "0000000é", "00 00000"]) expect(madeIdValue(id)).toBe(0);
  });
});

describe("idNumber", () => {
  test("a made id is its value; any other id a negative number; from bytes as from text", () => {
    expect(idNumber("Ab3dE6g9")).toBe(madeIdValue("Ab3dE6g9"));
    for (const id of ["short", "Ab3dE6g9x", "ab-cd-ef"]) expect(idNumber(id)).toBeLessThan(0);
    for (const id of ["Ab3dE6g9", "short", "ab-cd-ef"]) {
      const line = Buffer.from(`"${id}"`);
      expect(idNumberOfBytes(line, 1, line.length - 1)).toBe(idNumber(id));
    }
  });

  test("a plain line's id is read from its bytes as from its text", () => {
    const ids = new LineIds();
    for (const id of ["Ab3dE6g9", "not-made"]) {
      const line = Buffer.from(`{"id":"${id}","from":"a","to":"b","message":"m","read_flag":false}`);
      expect(ids.of(line, 0, line.length)).toBe(idNumber(id));
    }
  });
});

describe("PlainLines: the lines the byte fast path may read", () => {
  const lines = [
    '{"id":"a","from":"x"}',
    '{"id":"b","from":"x\\"y"}',
    '{"id":"c","moves":1}',
    '{"id":"d","meta":{"from":"y"}}',
    ' {"id":"e"}',
    '{"id":"f"',
    '{"id":"g","from":"z"}',
  ];
  const chunk = Buffer.from(`${lines.join("\n")}\n`);
  const verdicts = (plain: PlainLines) => {
    const found: boolean[] = [];
    for (let start = 0; start < chunk.length; ) {
      const end = chunk.indexOf(0x0a, start);
      found.push(plain.isPlain(chunk, start, end));
      start = end + 1;
    }
    return found;
  };

  test("an object with no escape and no move is plain; flat, also with no nested object", () => {
    expect(verdicts(new PlainLines())).toEqual([true, false, false, true, false, false, true]);
    expect(verdicts(new PlainLines({ flat: true }))).toEqual([true, false, false, false, false, false, true]);
  });

  test("asked of another chunk, it looks at that chunk's bytes", () => {
    const plain = new PlainLines();
    const escaped = Buffer.from('{"a":"\\n"}');
    expect(plain.isPlain(escaped, 0, escaped.length)).toBe(false);
    const other = Buffer.from('{"a":"b"}');
    expect(plain.isPlain(other, 0, other.length)).toBe(true);
  });
});
