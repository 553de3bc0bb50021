/**
 * JsonDocument: edits that keep every byte they do not touch, in the layouts people write by hand (comments,
 * trailing commas, tabs, CRLF, a BOM, one-line objects), and refusals for files that are not settings objects.
 */
import { describe, expect, test } from "bun:test";
import { JsonDocument, sameJson } from "../../../src/hooks/json-document.ts";

const edit = (text: string, change: (document: JsonDocument) => void) => {
  const document = JsonDocument.parse(text, "settings.json");
  change(document);
  return document.text;
};

describe("parse", () => {
  test("an empty file is an empty object; comments and trailing commas are allowed", () => {
    expect(JsonDocument.parse("", "x").value).toEqual({});
    expect(JsonDocument.parse("  \n", "x").value).toEqual({});
    expect(JsonDocument.parse('// c\n{"a": [1, 2,], /* b */ "b": {"c": null},}\n', "x").value).toEqual({ a: [1, 2], b: { c: null } });
  });

  test("a file that does not parse, or is not an object, is refused with where and what to do", () => {
    expect(() => JsonDocument.parse('{"a": 1\n"b": 2}', "/p/settings.json")).toThrow(
      /cannot parse \/p\/settings\.json \(CommaExpected at line 2, column 1\); fix it or move it away/,
    );
    expect(() => JsonDocument.parse("[1, 2]", "x")).toThrow("its top level is not a JSON object");
    expect(() => JsonDocument.parse('"text"', "x")).toThrow("not a JSON object");
  });
});

describe("set", () => {
  test("a new property goes on its own line after the last one; the lines above keep their bytes", () => {
    const before = '{\n    "model": "opus", // favourite\n    "env": {"A": "1"}\n}\n';
    expect(edit(before, (d) => d.set(["mcpServers", "agentmail"], { command: "agentmail" }))).toBe(
      '{\n    "model": "opus", // favourite\n    "env": {"A": "1"},\n    "mcpServers": {\n        "agentmail": {\n            "command": "agentmail"\n        }\n    }\n}\n',
    );
  });

  test("a comment after the last property stays on its line; trailing-comma style is kept", () => {
    expect(edit('{\n  "a": 1 // one\n}\n', (d) => d.set(["b"], 2))).toBe('{\n  "a": 1, // one\n  "b": 2\n}\n');
    expect(edit('{\n  "a": 1,\n}\n', (d) => d.set(["b"], 2))).toBe('{\n  "a": 1,\n  "b": 2,\n}\n');
  });

  test("tabs, CRLF and a BOM are the file's own and stay so", () => {
    const after = edit('\uFEFF{\r\n\t"a": 1\r\n}\r\n', (d) => d.set(["b"], { c: [1] }));
    expect(after).toBe('\uFEFF{\r\n\t"a": 1,\r\n\t"b": {\r\n\t\t"c": [\r\n\t\t\t1\r\n\t\t]\r\n\t}\r\n}\r\n');
  });

  test("a one-line object gets the new property inline", () => {
    expect(edit('{"a": 1}', (d) => d.set(["b"], { c: true }))).toBe('{"a": 1, "b":{"c":true}}');
  });

  test("an existing value is replaced where it is", () => {
    expect(edit('{\n  "a": {"old": 1}, // keep\n  "b": 2\n}\n', (d) => d.set(["a"], { new: 2 }))).toBe(
      '{\n  "a": {\n    "new": 2\n  }, // keep\n  "b": 2\n}\n',
    );
  });

  test("empty objects are filled, with or without comments inside", () => {
    expect(edit("", (d) => d.set(["a"], 1))).toBe('{\n  "a": 1\n}\n');
    expect(edit('{\n  "x": {}\n}\n', (d) => d.set(["x", "y"], 1))).toBe('{\n  "x": {\n    "y": 1\n  }\n}\n');
    expect(edit("{\n  // nothing yet\n}\n", (d) => d.set(["a"], 1))).toBe('{\n  // nothing yet\n  "a": 1\n}\n');
    expect(edit("{ /* nothing */ }", (d) => d.set(["a"], 1))).toBe('{ /* nothing */ \n  "a": 1\n}');
  });

  test("a container of another type on the way is refused", () => {
    expect(() => edit('{"hooks": []}', (d) => d.set(["hooks", "Stop"], []))).toThrow(
      "hooks in settings.json is not an object; fix it by hand",
    );
    expect(() => edit('{"hooks": {"Stop": {}}}', (d) => d.append(["hooks", "Stop"], 1))).toThrow(
      "hooks.Stop in settings.json is not a list",
    );
  });
});

describe("append and remove", () => {
  test("append adds a last item, creating the array when missing", () => {
    expect(edit('{\n  "a": [\n    1\n  ]\n}\n', (d) => d.append(["a"], 2))).toBe('{\n  "a": [\n    1,\n    2\n  ]\n}\n');
    expect(edit("{}", (d) => d.append(["a", "b"], 1))).toBe('{\n  "a": {\n    "b": [\n      1\n    ]\n  }\n}');
    expect(edit('{"a": []}', (d) => d.append(["a"], 1))).toBe('{"a": [\n  1\n]}');
  });

  test("remove takes an item's own lines, and the comma before a last item", () => {
    const text = '{\n  "a": [\n    1,\n    {\n      "x": 2\n    }, // two\n    3\n  ]\n}\n';
    expect(edit(text, (d) => d.remove(["a", 1]))).toBe('{\n  "a": [\n    1,\n    3\n  ]\n}\n');
    expect(edit(text, (d) => d.remove(["a", 2]))).toBe('{\n  "a": [\n    1,\n    {\n      "x": 2\n    } // two\n  ]\n}\n');
    expect(edit('{\n  "a": [\n    1,\n    2,\n  ]\n}\n', (d) => d.remove(["a", 1]))).toBe('{\n  "a": [\n    1,\n  ]\n}\n');
  });

  test("remove inside one line takes the item and one comma", () => {
    expect(edit('{"a": [1, 2, 3]}', (d) => d.remove(["a", 1]))).toBe('{"a": [1, 3]}');
    expect(edit('{"a": [1, 2, 3]}', (d) => d.remove(["a", 0]))).toBe('{"a": [2, 3]}');
    expect(edit('{"a": [1]}', (d) => d.remove(["a", 0]))).toBe('{"a": []}');
    expect(edit('{"a": 1, "b": 2}', (d) => d.remove(["b"]))).toBe('{"a": 1}');
    expect(edit('{"a": 1}', (d) => d.remove(["missing"]))).toBe('{"a": 1}');
  });

  test("set then remove gives back the original bytes", () => {
    const original = '// mine\n{\n    "model": "opus", // favourite\n    "env": {"A": "1"},\n}\n';
    const added = edit(original, (d) => d.set(["hooks", "Stop"], [{ hooks: [] }]));
    expect(edit(added, (d) => d.remove(["hooks"]))).toBe(original);
  });
});

describe("sameJson", () => {
  test("compares structure, not key order", () => {
    expect(sameJson({ a: 1, b: [1, { c: 2 }] }, { b: [1, { c: 2 }], a: 1 })).toBe(true);
    expect(sameJson({ a: 1 }, { a: 1, b: 2 })).toBe(false);
    expect(sameJson([1, 2], [2, 1])).toBe(false);
    expect(sameJson({ a: 1 }, [1])).toBe(false);
    expect(sameJson({ a: undefined }, { b: undefined })).toBe(false);
  });
});
