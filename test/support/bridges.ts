/** Helpers for the bridge tests: the seeds' example messages (test/fixtures/bridges), read verbatim. */
import { readFileSync } from "node:fs";
import { join } from "node:path";

export const FIXTURES = join(import.meta.dir, "..", "fixtures", "bridges");

export const fixture = (name: string) => readFileSync(join(FIXTURES, name), "utf8");
