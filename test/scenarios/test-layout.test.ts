/**
 * What test/README.md says of where tests are, checked: every unit test sits in the folder of src/ its code lives in,
 * and every test file test/README.md and ARCHITECTURE.md name exists (a moved test takes its mentions along).
 */
import { expect, test } from "bun:test";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";

const ROOT = join(import.meta.dir, "..", "..");

test("every unit test sits in a folder of src/", () => {
  const tests = readdirSync(join(ROOT, "test", "unit"), { recursive: true })
    .map(String)
    .filter((path) => path.endsWith(".test.ts"));
  expect(tests.length).toBeGreaterThan(0);
  expect(tests.filter((path) => !existsSync(join(ROOT, "src", dirname(path))))).toEqual([]);
});

test("the test files test/README.md and ARCHITECTURE.md name exist", () => {
  const named = ["test/README.md", "ARCHITECTURE.md"].flatMap((doc) =>
    [...readFileSync(join(ROOT, doc), "utf8").matchAll(/`(test\/[^`<>*\s]+\.ts)`/g)].map((match) => match[1]!),
  );
  expect(named.length).toBeGreaterThan(0);
  expect(named.filter((path) => !existsSync(join(ROOT, path)))).toEqual([]);
});
