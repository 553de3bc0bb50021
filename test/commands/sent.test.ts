/**
 * `agentmail sent` end to end over a long history: 50,000 messages alice sent, written straight into bob's and
 * carol's mailboxes and bob's archive (as bench/sizes.ts writes its million), listed newest first and whole, as text
 * and as one JSON document, cold (no index yet) and again from the index.
 */
import { describe, expect, test } from "bun:test";
import { mkdirSync, writeFileSync } from "node:fs";
import { dirname } from "node:path";
import { am, oneJson, type StoredMessage } from "../support/e2e.ts";
import { richMailWorld } from "../support/rich-mail.ts";

const { as, ok, send, mailbox, archiveOf } = richMailWorld();

const COUNT = 50_000;
const T0 = Date.parse("2025-06-01T00:00:00.000Z");

/** alice's messages, each one second after the last, dealt in turn to bob, carol and bob's archive; every fifth unread. */
function writeHistory(): string[] {
  const files = new Map<string, string[]>([
    [mailbox("bob"), []],
    [mailbox("carol"), []],
    [archiveOf("bob"), []],
  ]);
  const paths = [...files.keys()];
  const ids: string[] = [];
  for (let i = 0; i < COUNT; i++) {
    const path = paths[i % 3]!;
    const id = `H${i.toString(36).padStart(7, "0")}`;
    ids.push(id);
    const to = path === mailbox("carol") ? "carol" : "bob";
    const unread = i % 5 === 0 && path !== archiveOf("bob");
    files.get(path)!.push(
      JSON.stringify({
        id,
        from: "alice",
        to,
        message: `history ${i}`,
        read_flag: !unread,
        created_at: new Date(T0 + i * 1000).toISOString(),
      }),
    );
  }
  for (const [path, lines] of files) {
    mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
    writeFileSync(path, lines.join("\n") + "\n", { mode: 0o600 });
  }
  return ids;
}

describe("sent over a long history", () => {
  test("50,000 messages: every one, newest first, as text and as JSON, with and without the index", async () => {
    const history = writeHistory();
    const latest = await send("alice", ["bob", "the latest"]);
    const newestFirst = [latest, ...history.reverse()];
    for (const round of ["cold", "from the index"]) {
      const text = await ok("alice", ["sent"]);
      const lines = text.split("\n");
      expect({ round, lines: lines.length }).toEqual({ round, lines: newestFirst.length + 1 });
      expect(lines.map((line) => line.slice(0, 8))).toEqual([...newestFirst, ""]);
      expect(lines[0]).toMatch(new RegExp(`^${latest}  \\d+s  to bob  stored  the latest$`));
      expect(lines[1]).toMatch(/^H[0-9a-z]{7} {2}\d+d {2}to carol {2}read {2}history 49999$/);
      const listed = oneJson(await am(["sent", "--json"], as("alice"))) as (StoredMessage & {
        delivery: { state: string; at: string | null };
      })[];
      expect(listed.map((message) => message.id)).toEqual(newestFirst);
      expect(listed[1]).toEqual({
        id: newestFirst[1]!,
        from: "alice",
        to: "carol",
        message: "history 49999",
        read_flag: true,
        created_at: new Date(T0 + 49_999_000).toISOString(),
        delivery: { state: "read", at: null },
      });
    }
    const unread = oneJson(await am(["sent", "--unread", "--json"], as("alice"))) as StoredMessage[];
    const expectedUnread = newestFirst.filter(
      (id, at) => at === 0 || (Number.parseInt(id.slice(1), 36) % 5 === 0 && Number.parseInt(id.slice(1), 36) % 3 !== 2),
    );
    expect(unread.map((message) => message.id)).toEqual(expectedUnread);
    expect(await ok("bob", ["sent"])).toBe("No messages\n");
    expect(await ok("bob", ["sent", "--json"])).toBe("[]\n");
  });
});
