/** `agentmail archive` end to end: messages move out of the live mailbox and the reading commands still find them. */
import { describe, expect, test } from "bun:test";
import { existsSync } from "node:fs";
import { am, expectError, oneJson, readText, storedMessages } from "../support/e2e.ts";
import { richMailWorld, idsOf } from "../support/rich-mail.ts";

const { archiveOf, as, mailbox, ok, send } = richMailWorld();

describe("archive", () => {
  test("archive moves messages out of the live mailbox; inbox --archived, read, thread, sent and search still find them", async () => {
    const a = await send("alice", ["bob", "-s", "Alpha", "first topic"]);
    const b = await send("alice", ["bob", "second topic"]);
    const c = await send("carol", ["bob", "third topic"]);
    await ok("bob", ["receive"], "2 more unread; run agentmail receive again\n");
    await ok("bob", ["receive"], "1 more unread; run agentmail receive again\n");
    expect(await ok("bob", ["archive", "--read"])).toBe("Archived 2 messages\n");
    expect(storedMessages(mailbox("bob")).map((m) => m.id)).toEqual([c]);
    expect(storedMessages(archiveOf("bob")).map((m) => m.id)).toEqual([a, b]);
    expect(storedMessages(archiveOf("bob")).every((m) => typeof m.read_at === "string")).toBe(true);
    expect(idsOf(oneJson(await am(["inbox", "--archived", "--json"], as("bob"))))).toEqual([a, b]);
    expect(await ok("bob", ["read", a])).toContain(`ID: ${a}\nSubject: Alpha\n`);
    expect(idsOf(oneJson(await am(["thread", a, "--json"], as("carol"))))).toEqual([a]);
    expect(idsOf(oneJson(await am(["sent", "--json"], as("alice"))))).toEqual([b, a]);
    expect(idsOf(oneJson(await am(["search", "TOPIC", "--json"], as("bob"))))).toEqual([a, b, c]);
    expect(JSON.parse(await ok("bob", ["archive", c, "--json"]))).toEqual({ archived: [c] });
    // The last message left: the live mailbox is gone, the archive holds all three.
    expect(existsSync(mailbox("bob"))).toBe(false);
    expect(expectError(await am(["archive", c], as("bob")), 1)).toContain(`no message ${c}`);
    expect(await ok("bob", ["archive", "--read"])).toBe("Archived 0 messages\n");
  });

  test("archive by id: an unknown id among them archives nothing", async () => {
    const a = await send("alice", ["bob", "keep me"]);
    const before = readText(mailbox("bob"));
    expect(expectError(await am(["archive", a, "Nope0000"], as("bob")), 1)).toContain("Nope0000");
    expect(readText(mailbox("bob"))).toBe(before);
    expect(existsSync(archiveOf("bob"))).toBe(false);
  });
});
