/**
 * The bridges cost `send` and `receive` nothing at start-up: built as build.ts builds the binary (code splitting),
 * the chunks a plain send or receive loads (their command chunk and everything it imports statically) hold no
 * bridge code but the address check, and no YAML; only a bridge address reaches them, through a dynamic import.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { buildChunks, type Chunk, type Chunks, loadedChunks } from "../../support/chunks.ts";

let outdir: string;
let outputs: Chunks;

beforeAll(async () => {
  outdir = mkdtempSync(join(tmpdir(), "agentmail-chunks-"));
  outputs = await buildChunks(outdir);
});
afterAll(() => rmSync(outdir, { recursive: true, force: true }));

/** Every source file in the chunk holding `source` and in the chunks it imports statically. */
const staticallyLoaded = (source: string): string[] => loadedChunks(outputs, source).flat();

test("send and receive load no bridge code but the address check, and no YAML", () => {
  for (const command of ["src/commands/send.ts", "src/commands/receive.ts"]) {
    const loaded = staticallyLoaded(command);
    expect(loaded).toContain(command);
    expect(loaded.filter((source) => source.includes("bridges/") && source !== "src/bridges/address.ts")).toEqual([]);
    expect(loaded.filter((source) => source.includes("node_modules/yaml"))).toEqual([]);
  }
});

test("the bridge code does load the formats, and YAML sits in a chunk of its own: the check above looks at real chunks", () => {
  expect(staticallyLoaded("src/bridges/sync.ts")).toContain("src/bridges/formats/frontmatter.ts");
  const holdsYaml = (output: Chunk) => Object.keys(output.inputs).some((source) => source.includes("node_modules/yaml"));
  const yamlChunks = Object.values(outputs).filter(holdsYaml);
  expect(yamlChunks.length).toBeGreaterThan(0);
});
