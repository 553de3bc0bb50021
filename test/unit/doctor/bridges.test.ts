/**
 * What `agentmail doctor` says of the files the bridges left alone (src/doctor/bridges.ts), run in process after real
 * syncs: each file the last sync left, with its bridge and reason, as a note; a file fixed since drops out after the
 * next sync; a hostile file name reaches the report as one line. Which files a sync leaves, and why, is
 * test/unit/bridges/sync.test.ts.
 */
import { afterEach, beforeEach, describe, expect, test } from "bun:test";
import { syncBridges } from "../../../src/bridges/sync.ts";
import type { Finding } from "../../../src/doctor/finding.ts";
import { FileStore } from "../../../src/store/file/file-store.ts";
import { bridgeWorld, feat124Text, type BridgeWorld } from "../../support/bridges.ts";
import { runInProcess } from "../../support/in-process.ts";

let world: BridgeWorld;
beforeEach(async () => {
  world = await bridgeWorld();
});
afterEach(() => world.remove());

const sync = () => syncBridges(world.root, new FileStore(world.root), { settleMs: 0 });

/** doctor's findings of the bridges area, as `doctor --json` prints them. */
async function bridgeLines(): Promise<Finding[]> {
  const run = await runInProcess(["doctor", "--json"], { env: { ...world.place.env, HOME: world.dir }, cwd: world.dir });
  const report = JSON.parse(run.stdout) as { findings: Finding[] };
  return report.findings.filter((finding) => finding.area === "bridges");
}

const NO_TYPE = `---\nfrom: "w"\nto: "alice"\ntimestamp: 2024-01-28T15:30:00Z\n---\n\nbody\n`;

describe("doctor and the files the bridges left alone", () => {
  test("each file the last sync left is a note naming its bridge, the file and why; a file fixed since drops out after the next sync", async () => {
    world.write(".mail/alice/no-type.md", NO_TYPE);
    world.write(".roo/mailbox/to-bob.md", "---\nfrom: x\nto: bob\n---\n\nno timestamp\n");
    world.write(".mail/alice/good.md", feat124Text("w", "alice", "fine"));
    expect(await bridgeLines()).toEqual([]);
    await sync();
    expect(await bridgeLines()).toEqual([
      {
        area: "bridges",
        status: "note",
        message: "feat124 .mail/alice/no-type.md: required field 'type' is missing or empty (as of the last sync)",
        fix: null,
      },
      {
        area: "bridges",
        status: "note",
        message: "roo .roo/mailbox/to-bob.md: required field 'timestamp' is missing or empty (as of the last sync)",
        fix: null,
      },
    ]);
    world.write(".mail/alice/no-type.md", feat124Text("w", "alice", "fixed"));
    // Until the next sync, doctor says what the last one found.
    expect(await bridgeLines()).toHaveLength(2);
    await sync();
    expect((await bridgeLines()).map((finding) => finding.message)).toEqual([
      "roo .roo/mailbox/to-bob.md: required field 'timestamp' is missing or empty (as of the last sync)",
    ]);
  });

  test("a hostile file name reaches the report as one line with its control characters shown, not acted on", async () => {
    world.write(".mail/alice/evil\u001b[2J\rname.md", NO_TYPE);
    await sync();
    const [finding, ...rest] = await bridgeLines();
    expect(rest).toEqual([]);
    expect(finding!.message).toStartWith("feat124 .mail/alice/evil");
    expect(finding!.message).toEndWith("name.md: required field 'type' is missing or empty (as of the last sync)");
    expect(finding!.message).not.toMatch(/[\u0000-\u001f\u007f]/);
  });
});
