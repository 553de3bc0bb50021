/** The Store contract (test/support/store-contract.ts) on the file store: the same tests the Redis store passes. */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll } from "bun:test";
import { FileStore } from "../../src/store/file-store.ts";
import { storeContract } from "../support/store-contract.ts";

const home = mkdtempSync(join(tmpdir(), "agentmail-contract-"));
let places = 0;

afterAll(() => rmSync(home, { recursive: true, force: true }));

storeContract({
  freshPlace: (label) => join(home, `${label.replace(/[^a-z0-9]+/gi, "-")}-${++places}`),
  open: (root) => new FileStore(root),
});
