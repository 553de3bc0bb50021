/**
 * The person's views cost `send`, `receive` and the hook nothing at start-up: built as build.ts builds the binary
 * (code splitting), the chunks a send or a receive loads (their command chunk and everything it imports statically)
 * hold none of the room, `watch`, `web`, the screen, the key reader or the store's feeds; only those commands load
 * them.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

interface Output {
  inputs: Record<string, unknown>;
  imports?: { path: string; kind: string }[];
}

let outdir: string;
let outputs: Record<string, Output>;

beforeAll(async () => {
  outdir = mkdtempSync(join(tmpdir(), "agentmail-room-chunks-"));
  const options = { entrypoints: ["src/cli.ts"], splitting: true, format: "esm", target: "bun", outdir, metafile: true };
  const result = await Bun.build(options as Parameters<typeof Bun.build>[0]);
  expect(result.success).toBe(true);
  outputs = (result as unknown as { metafile: { outputs: Record<string, Output> } }).metafile.outputs;
}, 60_000);
afterAll(() => rmSync(outdir, { recursive: true, force: true }));

/** Every source file in the chunk holding `source` and in the chunks it imports statically. */
function staticallyLoaded(source: string): string[] {
  const start = Object.keys(outputs).find((name) => Object.keys(outputs[name]!.inputs).includes(source));
  expect(start).toBeDefined();
  const seen = new Set<string>();
  const queue = [start!];
  while (queue.length > 0) {
    const name = queue.pop()!;
    if (seen.has(name)) continue;
    seen.add(name);
    for (const imported of outputs[name]!.imports ?? []) if (imported.kind === "import-statement") queue.push(imported.path);
  }
  return [...seen].flatMap((name) => Object.keys(outputs[name]?.inputs ?? {}));
}

const VIEWS = [
  "src/room/",
  "src/watch/",
  "src/web/",
  "src/output/screen.ts",
  "src/input/keys.ts",
  "src/actions/human.ts",
  "src/actions/room.ts",
  "src/store/feed.ts",
  "src/store/redis/feed.ts",
];

test("send and receive load none of the room, watch, web, the screen or the feeds", () => {
  for (const command of ["src/commands/send.ts", "src/commands/receive.ts"]) {
    const loaded = staticallyLoaded(command);
    expect(loaded).toContain(command);
    expect(loaded.filter((source) => VIEWS.some((view) => source.startsWith(view)))).toEqual([]);
  }
});

test("watch and web do load them: the check above looks at real chunks", () => {
  expect(staticallyLoaded("src/watch/app.ts")).toContain("src/output/screen.ts");
  expect(staticallyLoaded("src/web/server.ts")).toContain("src/web/client.ts");
  expect(staticallyLoaded("src/commands/watch.ts")).toContain("src/actions/room.ts");
});
