import { expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { REFERENCE_PATH, renderReference } from "../../scripts/reference.ts";
import { BINARY } from "../support/e2e.ts";

test("docs/reference.md is exactly the help the compiled binary prints (npm run docs:reference rewrites it)", () => {
  const written = readFileSync(REFERENCE_PATH, "utf8").split("\n");
  const printed = renderReference(BINARY).split("\n");
  const differs = written.findIndex((text, index) => text !== printed[index]);
  const line = differs === -1 ? written.length : differs;
  const stale =
    differs === -1 && written.length === printed.length
      ? ""
      : `docs/reference.md is not the binary's help: line ${line + 1} reads ${JSON.stringify(written[line])}, the binary prints ${JSON.stringify(printed[line])}; run npm run docs:reference`;
  expect(stale).toBe("");
});
