/**
 * What the lazy-load tests share: the binary's sources built as build.ts builds them (code splitting), and the walk
 * from a source's chunk through the chunks it imports statically, which is what a command loads at start-up.
 */
import { expect } from "bun:test";

/** One output chunk of the build's metafile. */
export interface Chunk {
  inputs: Record<string, unknown>;
  imports?: { path: string; kind: string }[];
}

export type Chunks = Record<string, Chunk>;

/** Builds src/cli.ts with code splitting into `outdir`; returns its chunks. */
export async function buildChunks(outdir: string, plugins: unknown[] = []): Promise<Chunks> {
  const options = { entrypoints: ["src/cli.ts"], splitting: true, format: "esm", target: "bun", outdir, metafile: true, plugins };
  const result = await Bun.build(options as unknown as Parameters<typeof Bun.build>[0]);
  expect(result.success).toBe(true);
  return (result as unknown as { metafile: { outputs: Chunks } }).metafile.outputs;
}

/** The chunk holding `source` and every chunk it imports statically, each as the sorted list of its sources. */
export function loadedChunks(chunks: Chunks, source: string): string[][] {
  const start = Object.keys(chunks).find((name) => Object.keys(chunks[name]!.inputs).includes(source));
  expect(start).toBeDefined();
  const seen = new Set<string>();
  const queue = [start!];
  while (queue.length > 0) {
    const name = queue.pop()!;
    if (seen.has(name)) continue;
    expect(chunks[name]).toBeDefined();
    seen.add(name);
    for (const imported of chunks[name]!.imports ?? []) if (imported.kind === "import-statement") queue.push(imported.path);
  }
  return [...seen].map((name) => Object.keys(chunks[name]?.inputs ?? {}).sort()).sort();
}
