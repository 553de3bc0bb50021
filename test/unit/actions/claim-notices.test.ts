/**
 * The mail claims cause (src/actions/claim-notices.ts), in process on a file store: what a holder is told when an
 * agent runs into its claims, what the asker is told, and what a waiter is told when what it waited for goes; each
 * from agentmail, once per agent however many claims are involved, every list bounded (MAX_LISTED) with the rest
 * counted; and a notice that cannot be stored is a warning, never a failure of what caused it. The same notices
 * through the binary are test/commands/claim.test.ts.
 */
import { afterEach, beforeEach, describe, expect, test } from "bun:test";
import { tellConflicts, tellFreed } from "../../../src/actions/claim-notices.ts";
import { type Conflict, MAX_LISTED } from "../../../src/claims/claims.ts";
import type { Message } from "../../../src/mail/message.ts";
import { FileStore } from "../../../src/store/file/file-store.ts";
import type { Store } from "../../../src/store/store.ts";
import { tempRepo } from "../../support/repo.ts";
import { CLAIMS_NOW as NOW, storedClaim as claim } from "../../support/stored-claim.ts";

let repo: ReturnType<typeof tempRepo>;
let store: FileStore;
beforeEach(() => {
  repo = tempRepo();
  store = new FileStore(repo.mailDir);
});
afterEach(() => repo.remove());

/** The notices `agent` got, oldest first. */
const notices = async (agent: string): Promise<Message[]> => store.unread(agent);

describe("a conflict", () => {
  test("the holder hears who asked for what its claim covers and how to release it; the asker, that it waits and will be told", async () => {
    const held = claim("alice", "src/auth/**", { reason: "rewriting login" });
    expect(await tellConflicts(store, "bob", [{ asked: "src/auth/login.ts", held }], NOW, "claim")).toEqual([]);
    const [toAlice, ...moreToAlice] = await notices("alice");
    expect(moreToAlice).toEqual([]);
    expect(toAlice).toMatchObject({
      from: "agentmail",
      to: "alice",
      subject: "claim wanted: src/auth/login.ts",
      type: "alert",
      tags: ["claims"],
    });
    expect(toAlice!.message).toBe(
      `bob asked to claim src/auth/login.ts, which your claim src/auth/** (exclusive, alice, "rewriting login", until 2026-05-01T11:00:00Z, 1h00m left) covers. ` +
        "bob waits for it and will be told by mail when it is free. When you are done with it: agentmail release src/auth/** " +
        '(or the release tool). To answer bob: agentmail send bob "…".',
    );
    const [toBob] = await notices("bob");
    expect(toBob).toMatchObject({ from: "agentmail", subject: "claim refused: src/auth/login.ts", type: "status", tags: ["claims"] });
    expect(toBob!.message).toBe(
      "You asked to claim src/auth/login.ts, claimed by another agent:\n" +
        `- src/auth/** (exclusive, alice, "rewriting login", until 2026-05-01T11:00:00Z, 1h00m left)\n` +
        'Its holder has been told. You will get mail when it is free. Meanwhile ask the holder (agentmail send alice "…"), ' +
        "or wait for it (agentmail claim src/auth/login.ts --wait SECONDS).",
    );
  });

  test("an edit that runs into many of one holder's claims: one notice each way, the lists bounded and the rest counted", async () => {
    const count = MAX_LISTED + 2;
    const news: Conflict[] = Array.from({ length: count }, (_, index) => ({
      asked: `lib/f${index}.ts`,
      held: claim("alice", `lib/f${index}.ts`),
    }));
    expect(await tellConflicts(store, "bob", news, NOW, "edit")).toEqual([]);
    const toAlice = await notices("alice");
    expect(toAlice).toHaveLength(1);
    expect(toAlice[0]!.subject).toBe(`claim wanted: lib/f0.ts and ${count - 1} more`);
    const body = toAlice[0]!.message;
    expect(body).toStartWith(
      `bob tried to edit ${news
        .slice(0, MAX_LISTED)
        .map((each) => each.asked)
        .join(", ")}, 2 more paths, which ${count} of your claims cover:\n- lib/f0.ts (exclusive, alice,`,
    );
    expect(body.split("\n").filter((line) => line.startsWith("- "))).toHaveLength(MAX_LISTED + 1);
    expect(body).toContain("\n- and 2 more ('agentmail claims' lists them)\n");
    expect(body).not.toContain("lib/f11.ts (exclusive");
    expect(body).toEndWith(
      "bob waits for them and will be told by mail when they are free. When you are done with them: " +
        'agentmail release <path>... (all of yours: agentmail release) (or the release tool). To answer bob: agentmail send bob "…".',
    );
    const toBob = await notices("bob");
    expect(toBob.map((message) => message.subject)).toEqual([`edit refused: lib/f0.ts and ${count - 1} more`]);
    expect(toBob[0]!.message).toContain("\n- and 2 more ('agentmail claims' lists them)\n");
    expect(toBob[0]!.message).toContain(", 2 more paths, claimed by another agent:\n");
  });

  test("a commit that runs into two holders: each hears only of its own claims; the asker of both", async () => {
    const news: Conflict[] = [
      { asked: "a.ts", held: claim("alice", "a.ts") },
      { asked: "b.ts", held: claim("carol", "b.ts", { shared: true }) },
      { asked: "c.ts", held: claim("alice", "c.ts") },
    ];
    await tellConflicts(store, "bob", news, NOW, "commit");
    expect((await notices("alice")).map((message) => message.subject)).toEqual(["claim wanted: a.ts and 1 more"]);
    expect((await notices("alice"))[0]!.message).toStartWith("bob tried to commit a.ts, c.ts, which 2 of your claims cover:\n");
    expect((await notices("carol"))[0]!.message).toStartWith("bob tried to commit b.ts, which your claim b.ts (shared, carol,");
    const [toBob] = await notices("bob");
    expect(toBob!.subject).toBe("commit refused: a.ts and 2 more");
    const listed = toBob!.message.split("\n").filter((line) => line.startsWith("- "));
    expect(listed.map((line) => line.slice(0, line.indexOf(", until")))).toEqual([
      "- a.ts (exclusive, alice",
      "- b.ts (shared, carol",
      "- c.ts (exclusive, alice",
    ]);
  });

  test("nothing new: nobody is told", async () => {
    expect(await tellConflicts(store, "bob", [], NOW, "claim")).toEqual([]);
    expect(await store.mailboxes()).toEqual([]);
  });

  test("a notice that cannot be stored is a warning naming whom it was for; the others are still sent", async () => {
    const failing: Store = Object.assign(Object.create(store) as Store, {
      append: (message: Message) => (message.to === "alice" ? Promise.reject(new Error("disk full")) : store.append(message)),
    });
    const warnings = await tellConflicts(failing, "bob", [{ asked: "a.ts", held: claim("alice", "a.ts") }], NOW, "claim");
    expect(warnings).toEqual(["could not tell alice by mail (disk full)"]);
    expect((await notices("bob")).map((message) => message.subject)).toEqual(["claim refused: a.ts"]);
  });
});

describe("a claim that went", () => {
  test("each waiter hears once that the path is free and why; neither the releaser nor the holder is told", async () => {
    const released = claim("alice", "src/a.ts", { waiters: ["bob", "carol", "alice"] });
    expect(await tellFreed(store, [released], [], "carol")).toEqual([]);
    expect(await notices("carol")).toEqual([]);
    expect(await notices("alice")).toEqual([]);
    const [toBob, ...more] = await notices("bob");
    expect(more).toEqual([]);
    expect(toBob).toMatchObject({ from: "agentmail", subject: "claim released: src/a.ts", type: "status", tags: ["claims"] });
    expect(toBob!.message).toBe(
      "src/a.ts is free: alice released it. Claim what you asked for again if you still need it (agentmail claim <path>, or the claim tool).",
    );
  });

  test("claims that ran out or whose holder is gone say so; a waiter of many hears once, the list bounded and the rest counted", async () => {
    const swept = [
      { claim: claim("alice", "ran-out.ts", { waiters: ["bob"] }), why: "expired" },
      ...Array.from({ length: MAX_LISTED + 1 }, (_, index) => ({
        claim: claim("dave", `gone${index}.ts`, { waiters: ["bob"] }),
        why: "its holder's window is closed",
      })),
    ];
    await tellFreed(store, [], swept, null);
    const toBob = await notices("bob");
    expect(toBob.map((message) => message.subject)).toEqual([`claim released: ran-out.ts and ${MAX_LISTED + 1} more`]);
    const lines = toBob[0]!.message.split("\n");
    expect(lines[0]).toBe(`${MAX_LISTED + 2} paths you waited for are free:`);
    expect(lines.slice(1, 3)).toEqual([
      "- ran-out.ts: alice's claim ran out",
      "- gone0.ts: dave's claim ended: its holder's window is closed",
    ]);
    expect(lines.filter((line) => line.startsWith("- "))).toHaveLength(MAX_LISTED + 1);
    expect(lines.at(-2)).toBe("- and 2 more");
    expect(lines.at(-1)).toBe("Claim what you asked for again if you still need it (agentmail claim <path>, or the claim tool).");
  });

  test("no waiters: nobody is told", async () => {
    expect(await tellFreed(store, [claim("alice", "a.ts")], [{ claim: claim("dave", "b.ts"), why: "expired" }], "alice")).toEqual([]);
    expect(await store.mailboxes()).toEqual([]);
  });
});
