/**
 * The person's views cost `send`, `receive` and the hook nothing at start-up: built as build.ts builds the binary
 * (code splitting), the chunks a send or a receive loads (their command chunk and everything it imports statically)
 * hold none of the room, `watch`, `web`, the screen, the key reader or the store's feeds; only those commands load
 * them. Nor do they make send and receive load more chunks: a module shared in a new way is split by the bundler
 * into a chunk of its own (each one more file to load), so the chunks are compared with a build without the views.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { buildChunks, type Chunks, loadedChunks } from "../../support/chunks.ts";

let outdir: string;
let outputs: Chunks;
let without: Chunks;

/** What the views add to the code every build holds: the two commands and the stores' feeds. */
const VIEW_ENTRIES: [RegExp, (text: string) => string][] = [
  [/src\/commands\/index\.ts$/, (text) => text.replace(/^ {4}(watch|web): lazy.*\n/gm, "")],
  [/src\/store\/file-store\.ts$/, (text) => text.replace('await import("./feed.ts")', "({ FileFeed: null as never })")],
  [/src\/store\/redis\/redis-store\.ts$/, (text) => text.replace('await import("./feed.ts")', "({ RedisFeed: null as never })")],
];

async function build(dir: string, withoutViews: boolean): Promise<Chunks> {
  const plugins = withoutViews
    ? [
        {
          name: "without-views",
          setup(builder: { onLoad(options: { filter: RegExp }, load: (args: { path: string }) => Promise<unknown>): void }) {
            for (const [filter, edit] of VIEW_ENTRIES) {
              builder.onLoad({ filter }, async ({ path }) => ({ contents: edit(await Bun.file(path).text()), loader: "ts" }));
            }
          },
        },
      ]
    : [];
  return buildChunks(dir, plugins);
}

beforeAll(async () => {
  outdir = mkdtempSync(join(tmpdir(), "agentmail-room-chunks-"));
  outputs = await build(join(outdir, "with"), false);
  without = await build(join(outdir, "without"), true);
});
afterAll(() => rmSync(outdir, { recursive: true, force: true }));

/** Every source file in the chunk holding `source` and in the chunks it imports statically. */
const staticallyLoaded = (source: string): string[] => loadedChunks(outputs, source).flat();

const VIEWS = [
  "src/room/",
  "src/watch/",
  "src/web/",
  "src/output/screen.ts",
  "src/input/keys.ts",
  "src/actions/human.ts",
  "src/actions/room.ts",
  "src/store/file/feed.ts",
  "src/store/redis/feed.ts",
];

test("send and receive load none of the room, watch, web, the screen or the feeds", () => {
  for (const command of ["src/commands/send.ts", "src/commands/receive.ts"]) {
    const loaded = staticallyLoaded(command);
    expect(loaded).toContain(command);
    expect(loaded.filter((source) => VIEWS.some((view) => source.startsWith(view)))).toEqual([]);
  }
});

test("send and receive load the same chunks as a build without the views", () => {
  for (const command of ["src/commands/send.ts", "src/commands/receive.ts"]) {
    expect(loadedChunks(outputs, command)).toEqual(loadedChunks(without, command));
  }
});

test("watch and web do load them: the checks above look at real chunks", () => {
  expect(staticallyLoaded("src/watch/app.ts")).toContain("src/output/screen.ts");
  expect(staticallyLoaded("src/web/server.ts")).toContain("src/web/bundle-page.ts");
  expect(staticallyLoaded("src/commands/watch.ts")).toContain("src/actions/room.ts");
});
