/** `agentmail reply` end to end (the whole conversation it takes part in: test/scenarios/rich-mail.test.ts). */
import { describe, expect, test } from "bun:test";
import { am, expectError, storedMessages } from "../support/e2e.ts";
import { richMailWorld } from "../support/rich-mail.ts";

const { as, mailbox, send } = richMailWorld();

describe("reply", () => {
  test("replying to an id that is not in the caller's mailbox is exit 1 and sends nothing", async () => {
    const id = await send("alice", ["bob", "for bob"]);
    expect(expectError(await am(["reply", id, "stolen"], as("carol")), 1)).toContain("agentmail inbox --all");
    expect(expectError(await am(["reply", "Nope0000", "x"], as("bob")), 1)).toContain("no message Nope0000 in your mailbox");
    expect(storedMessages(mailbox("alice"))).toEqual([]);
  });
});
