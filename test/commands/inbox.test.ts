/** `agentmail inbox` end to end: unread only, oldest first, marks nothing; --all, filters, one line per message. */
import { describe, expect, test } from "bun:test";
import { am, oneJson, readText } from "../support/e2e.ts";
import { richMailWorld, idsOf } from "../support/rich-mail.ts";

const { as, mailbox, ok, send } = richMailWorld();

describe("inbox", () => {
  test("inbox: unread only, oldest first, marks nothing; --all marks unread with *; filters; empty says so", async () => {
    expect(await ok("bob", ["inbox"])).toBe("No messages\n");
    expect(await ok("bob", ["inbox", "--json"])).toBe("[]\n");
    const low = await send("alice", ["bob", "-p", "low", "-m", "whenever"]);
    const high = await send("carol", ["bob", "-p", "high", "--tag", "ops", "-t", "task", "rotate the keys\nsecond line"]);
    const before = readText(mailbox("bob"));
    expect(await ok("bob", ["inbox"])).toMatch(
      new RegExp(`^${low}  \\d+s  alice  whenever\\n${high}  \\d+s  carol  ! \\[task\\] rotate the keys second line\\n$`),
    );
    expect(readText(mailbox("bob"))).toBe(before);
    expect(idsOf(oneJson(await am(["inbox", "--priority", "high", "--json"], as("bob"))))).toEqual([high]);
    expect(idsOf(oneJson(await am(["inbox", "--priority", "low", "--json"], as("bob"))))).toEqual([low, high]);
    expect(idsOf(oneJson(await am(["inbox", "--from", "alice", "--json"], as("bob"))))).toEqual([low]);
    expect(idsOf(oneJson(await am(["inbox", "--tag", "ops", "--type", "task", "--json"], as("bob"))))).toEqual([high]);
    await ok("bob", ["receive"], "1 more unread; run agentmail receive again\n");
    expect(await ok("bob", ["inbox", "--all"])).toMatch(
      new RegExp(`^${low}  \\d+s  alice  whenever\\n${high}  \\d+s  carol  \\*! \\[task\\] `),
    );
    expect(await ok("bob", ["inbox", "--thread", high])).toMatch(new RegExp(`^${high} `));
  });

  test("a long body is cut to 100 characters on one line when stdout is not a terminal", async () => {
    const id = await send("alice", ["bob", "word ".repeat(60)]);
    const line = (await ok("bob", ["inbox"])).trimEnd();
    expect(line.split("  ").slice(3).join("  ")).toHaveLength(100);
    expect(line).toStartWith(`${id}  `);
    expect(line).toEndWith("…");
  });
});
