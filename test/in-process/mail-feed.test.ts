/** The feed contract (test/support/feed-contract.ts) on the file store: the same tests the Redis store passes. */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll } from "bun:test";
import { FileStore } from "../../src/store/file-store.ts";
import { feedContract } from "../support/feed-contract.ts";

const home = mkdtempSync(join(tmpdir(), "agentmail-feed-"));
let places = 0;

afterAll(() => rmSync(home, { recursive: true, force: true }));

feedContract({
  freshPlace: (label) => join(home, `${label}-${++places}`),
  open: (root) => new FileStore(root),
});
