/** `agentmail read ID` end to end, beside `receive --peek`: showing a message without taking the next one. */
import { describe, expect, test } from "bun:test";
import { statSync } from "node:fs";
import { am, expectError, oneJson, readText, shown, type StoredMessage } from "../support/e2e.ts";
import { richMailWorld } from "../support/rich-mail.ts";

const { as, mailbox, ok, send } = richMailWorld();

describe("read and peek", () => {
  test("receive --peek shows what receive would take and marks nothing; read ID shows and marks read", async () => {
    const first = await send("alice", ["bob", "first"]);
    const second = await send("alice", ["bob", "-s", "Second", "second"]);
    const before = readText(mailbox("bob"));
    expect(await ok("bob", ["receive", "--peek"])).toBe(shown("alice", first, "first"));
    expect((oneJson(await am(["receive", "--peek", "--json"], as("bob"))) as StoredMessage).id).toBe(first);
    expect(readText(mailbox("bob"))).toBe(before);
    const inode = statSync(mailbox("bob")).ino;
    expect(await ok("bob", ["read", second])).toBe(`From: alice\nID: ${second}\nSubject: Second\n\n> second\n`);
    // Marked read in place: same file, same size; receive now takes the first, then nothing.
    expect(statSync(mailbox("bob")).ino).toBe(inode);
    expect(readText(mailbox("bob")).length).toBe(before.length);
    expect(await ok("bob", ["receive"])).toBe(shown("alice", first, "first"));
    expect(await ok("bob", ["receive"])).toBe("No unread messages\n");
    expect(await ok("bob", ["receive", "--peek"])).toBe("No unread messages\n");
    expect(await ok("bob", ["receive", "--peek", "--json"])).toBe("null\n");
    const again = oneJson(await am(["read", second, "--json"], as("bob"))) as StoredMessage;
    expect([again.id, again.read_flag, typeof again.read_at]).toEqual([second, true, "string"]);
    expect(expectError(await am(["read", "Nope0000"], as("bob")), 1)).toContain("agentmail inbox --all");
    expect(expectError(await am(["read", first], as("carol")), 1)).toContain(`no message ${first}`);
  });
});
