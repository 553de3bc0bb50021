/** The claims contract (test/support/claims-contract.ts) on the file store: the same tests the Redis store passes. */
import { afterAll } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { FileStore } from "../../src/store/file-store.ts";
import { claimsContract } from "../support/claims-contract.ts";

const home = mkdtempSync(join(tmpdir(), "agentmail-claims-contract-"));
let places = 0;

afterAll(() => rmSync(home, { recursive: true, force: true }));

claimsContract({
  freshPlace: (label) => join(home, `${label}-${++places}`),
  open: (root) => new FileStore(root),
});
