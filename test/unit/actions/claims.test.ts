/**
 * The claims actions (src/actions/claims.ts) that the commands' tests leave out, in process on a private tmux server:
 * a claim with no paths, a wait that runs out or is cancelled (and the holder told once however often the waiter
 * looks), the mail room's release of a gone holder's claim (refused while the holder may be alive or the claim only
 * ran out; the holder and the waiters told), and cleanup's sweep of ended claims. Claiming, waiting for a release
 * and the guard are test/unit/commands/claim.test.ts.
 */
import { beforeAll, describe, expect, test } from "bun:test";
import { claimPaths, releaseGoneClaim, releasePaths, sweepClaims } from "../../../src/actions/claims.ts";
import { type FileClaim, MAX_LISTED } from "../../../src/claims/claims.ts";
import type { Message } from "../../../src/mail/message.ts";
import { FileStore } from "../../../src/store/file/file-store.ts";
import type { Store } from "../../../src/store/store.ts";
import { rejectionOf } from "../../support/rejection.ts";
import { waitFor } from "../../support/wait.ts";
import { sharedSession } from "../../support/workflow.ts";

const session = sharedSession();
let store: FileStore;
beforeAll(() => {
  store = new FileStore(session.repo.mailDir);
});

const pane = (agent: string) => session.server.agent(agent).paneId;
const place = (agent: string) => session.inRepo(session.server.agent(agent).env);
const claim = (agent: string, paths: string[], extra: { ttlMs?: number; waitMs?: number | null; signal?: AbortSignal } = {}) =>
  claimPaths(place(agent), { paths, shared: false, ttlMs: extra.ttlMs ?? 3_600_000, waitMs: extra.waitMs, signal: extra.signal });

/** The claims notices `agent` has not read yet, by subject; taken, so the next look sees only new ones. */
async function noticesTo(agent: string): Promise<Message[]> {
  const taken: Message[] = [];
  while (await store.take(agent, (message) => void taken.push(message)));
  return taken.filter((message) => (message.tags as string[] | undefined)?.includes("claims"));
}

/** `holder`'s claim on `path`, as stored. */
const stored = async (holder: string, path: string): Promise<FileClaim | undefined> =>
  (await store.fileClaims()).claims.find((each) => each.holder === holder && each.path === path);

const waitsOn = (waiter: string, path: string) =>
  waitFor(`${waiter} to wait on the claim of ${path}`, async () =>
    (await store.fileClaims()).claims.some((each) => each.path === path && each.waiters.includes(waiter)),
  );

describe("claiming", () => {
  test("no paths: refused, saying what to give", async () => {
    const error = await rejectionOf(claim("alice", []));
    expect(error.code).toBe("usage");
    expect(error.message).toBe("give the paths or globs to claim, relative to this directory as git takes them");
  });

  test("a wait that runs out is refused saying it waited; the holder heard of the asker once, however often it looked", async () => {
    await claim("alice", ["wait/out.ts"]);
    const error = await rejectionOf(claim("bob", ["wait/out.ts"], { waitMs: 1_500 }));
    expect(error.code).toBe("claimed");
    expect(error.message).toStartWith("wait/out.ts is still, after waiting ");
    expect(error.message).toContain(" s, claimed by alice: wait/out.ts (exclusive, alice,");
    expect(error.message).toContain("alice was told you asked");
    expect((await noticesTo("alice")).map((message) => message.subject)).toEqual(["claim wanted: wait/out.ts"]);
    expect((await noticesTo("bob")).map((message) => message.subject)).toEqual(["claim refused: wait/out.ts"]);
  });

  test("refused by many claims: the refusal lists the first ones and counts the rest", async () => {
    const paths = Array.from({ length: MAX_LISTED + 2 }, (_, index) => `many/f${index}.ts`);
    await claim("alice", paths);
    const error = await rejectionOf(claim("bob", paths));
    expect(error.message).toStartWith(
      `${paths.slice(0, MAX_LISTED).join(", ")}, 2 more paths is claimed by alice: many/f0.ts (exclusive, alice,`,
    );
    expect(error.message.split("(exclusive, alice,")).toHaveLength(MAX_LISTED + 1);
    expect(error.message).toContain("; and 2 more claims ('agentmail claims' lists them); alice was told you asked");
    await releasePaths(place("alice"), paths);
  });

  test("a wait with no end, cancelled while it waits, ends refused; the claim stays the holder's", async () => {
    await claim("alice", ["wait/cancel.ts"]);
    const cancel = new AbortController();
    const waiting = claim("carol", ["wait/cancel.ts"], { waitMs: null, signal: cancel.signal });
    await waitsOn("carol", "wait/cancel.ts");
    cancel.abort();
    const error = await rejectionOf(waiting);
    expect(error.code).toBe("claimed");
    expect(error.message).toStartWith("wait/cancel.ts is still, after waiting ");
    expect((await stored("alice", "wait/cancel.ts"))?.waiters).toEqual(["carol"]);
    expect(await stored("carol", "wait/cancel.ts")).toBeUndefined();
  });
});

describe("the mail room's release of a gone holder's claim", () => {
  test("refused while the holder may be alive, or when the claim only ran out; an unknown id is not found", async () => {
    const [live] = (await claim("alice", ["room/live.ts"])).claims;
    const refused = await rejectionOf(releaseGoneClaim(store, "ana", live!.id));
    expect(refused.code).toBe("usage");
    expect(refused.message).toBe(
      'the claim of alice on room/live.ts is not yours to release: alice is not gone; ask them: agentmail send alice "…"',
    );
    const [short] = (await claim("bob", ["room/short.ts"], { ttlMs: 1 })).claims;
    await waitFor("bob's claim to run out", () => Date.now() > Date.parse(short!.expires_at));
    expect((await rejectionOf(releaseGoneClaim(store, "ana", short!.id))).message).toBe(
      'the claim of bob on room/short.ts is not yours to release: it ran out: the next claim or cleanup sweeps it; ask them: agentmail send bob "…"',
    );
    const unknown = await rejectionOf(releaseGoneClaim(store, "ana", "no-such-claim"));
    expect(unknown.code).toBe("not_found");
    expect(unknown.message).toBe("no claim no-such-claim is stored (released or swept already)");
    expect(await stored("alice", "room/live.ts")).toBeDefined();
    expect(await stored("bob", "room/short.ts")).toBeDefined();
  });

  test("a holder gone offline: its claim goes; it hears from the person, each waiter that the path is free; twice is not found", async () => {
    const [held] = (await claim("carol", ["room/gone.ts"])).claims;
    await rejectionOf(claim("bob", ["room/gone.ts"]));
    await noticesTo("carol");
    await noticesTo("bob");
    await store.writeStatus({ name: "carol", status: "offline", pane: pane("carol") });
    const { released, warnings } = await releaseGoneClaim(store, "ana", held!.id);
    expect(warnings).toEqual([]);
    expect([released.path, released.holder]).toEqual(["room/gone.ts", "carol"]);
    expect(await stored("carol", "room/gone.ts")).toBeUndefined();
    const [toCarol, ...more] = await noticesTo("carol");
    expect(more).toEqual([]);
    expect(toCarol).toMatchObject({ from: "ana", subject: "claim released: room/gone.ts", type: "status" });
    expect(toCarol!.message).toBe(
      "ana released your claim on room/gone.ts from the mail room: its holder went offline. " +
        "Claim it again when you are back, if you still need it (agentmail claim room/gone.ts).",
    );
    const toBob = await noticesTo("bob");
    expect(toBob.map((message) => [message.from, message.message])).toEqual([
      [
        "agentmail",
        "room/gone.ts is free: carol's claim ended: released by ana: its holder went offline. " +
          "Claim what you asked for again if you still need it (agentmail claim <path>, or the claim tool).",
      ],
    ]);
    expect((await rejectionOf(releaseGoneClaim(store, "ana", held!.id))).code).toBe("not_found");
    await store.writeStatus({ name: "carol", status: "ready", pane: pane("carol") });
  });

  test("mail to the holder that cannot be stored is a warning; the claim is released all the same", async () => {
    const [held] = (await claim("alice", ["room/unmailable.ts"])).claims;
    await store.writeStatus({ name: "alice", status: "offline", pane: pane("alice") });
    // The store, but mail to alice cannot be stored.
    const failing = new Proxy(store, {
      get(target, key) {
        if (key === "append")
          return (message: Message) => (message.to === "alice" ? Promise.reject(new Error("disk full")) : target.append(message));
        const value = Reflect.get(target, key, target);
        return typeof value === "function" ? value.bind(target) : value;
      },
    }) as Store;
    const { warnings } = await releaseGoneClaim(failing, "ana", held!.id);
    expect(warnings).toEqual(["could not tell alice by mail (disk full)"]);
    expect(await stored("alice", "room/unmailable.ts")).toBeUndefined();
    await store.writeStatus({ name: "alice", status: "ready", pane: pane("alice") });
  });
});

describe("cleanup's sweep", () => {
  test("a dry run reports the claims that ended and why, keeping them; the sweep removes them and tells their waiters", async () => {
    await claim("bob", ["sweep/kept.ts"]);
    await rejectionOf(claim("carol", ["sweep/kept.ts"]));
    await noticesTo("carol");
    // Claimed last: the next claim would sweep it once it ran out.
    const [short] = (await claim("alice", ["sweep/short.ts"], { ttlMs: 1 })).claims;
    await waitFor("alice's claim to run out", () => Date.now() > Date.parse(short!.expires_at));
    await store.writeStatus({ name: "bob", status: "offline", pane: pane("bob") });
    const ended = (swept: { claim: FileClaim; why: string }[]) =>
      swept.filter(({ claim }) => claim.path.startsWith("sweep/")).map(({ claim, why }) => [claim.path, claim.holder, why]);
    const dry = await sweepClaims(store, true);
    expect(ended(dry.swept)).toEqual([
      ["sweep/kept.ts", "bob", "its holder went offline"],
      ["sweep/short.ts", "alice", "expired"],
    ]);
    expect(await stored("bob", "sweep/kept.ts")).toBeDefined();
    expect(await noticesTo("carol")).toEqual([]);
    const done = await sweepClaims(store, false);
    expect(ended(done.swept)).toEqual(ended(dry.swept));
    expect(await stored("alice", "sweep/short.ts")).toBeUndefined();
    expect(await stored("bob", "sweep/kept.ts")).toBeUndefined();
    expect((await noticesTo("carol")).map((message) => message.message)).toEqual([
      expect.stringContaining("sweep/kept.ts is free: bob's claim ended: its holder went offline."),
    ]);
    await store.writeStatus({ name: "bob", status: "ready", pane: pane("bob") });
  });
});
