/** `agentmail search` end to end: the caller's mail and the mail it sent, by subject or body, substring or --regex. */
import { describe, expect, test } from "bun:test";
import { am, expectError, oneJson } from "../support/e2e.ts";
import { richMailWorld, idsOf } from "../support/rich-mail.ts";

const { as, ok, send } = richMailWorld();

describe("search", () => {
  test("search: the caller's mail and the mail it sent, by subject or body, substring or --regex", async () => {
    const mine = await send("alice", ["bob", "-s", "Deploy window", "tonight at 10"]);
    const theirs = await send("bob", ["alice", "the DEPLOY failed"]);
    await send("carol", ["bob", "deploy is not alice's business"]);
    expect(idsOf(oneJson(await am(["search", "deploy", "--json"], as("alice"))))).toEqual([mine, theirs]);
    expect(await ok("alice", ["search", "--regex", "fail(ed)?$"])).toMatch(new RegExp(`^${theirs}  \\d+s  bob  \\* the DEPLOY failed\\n$`));
    expect(await ok("alice", ["search", "nothing like it"])).toBe("No messages\n");
    expect(expectError(await am(["search", "--regex", "a{2,1}"], as("alice")), 1)).toBe(
      "error: invalid regular expression 'a{2,1}': numbers out of order in {} quantifier; fix it, or search without --regex for plain text\n",
    );
  });
});
