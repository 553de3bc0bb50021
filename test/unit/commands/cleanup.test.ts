/**
 * `agentmail cleanup`'s report through the command tree in process, in a pane of a private tmux server: a dead letter
 * returned to its sender and a claim whose holder went offline, each one line saying what was done (a dry run: what
 * would be, in the same words, changing nothing). The rest of cleanup end to end is test/commands/cleanup.test.ts.
 */
import { beforeAll, describe, expect, test } from "bun:test";
import { createMessage } from "../../../src/mail/message.ts";
import { FileStore } from "../../../src/store/file/file-store.ts";
import { runInProcess } from "../../support/in-process.ts";
import { sharedSession } from "../../support/workflow.ts";

const session = sharedSession();
let store: FileStore;
beforeAll(() => {
  store = new FileStore(session.repo.mailDir);
});

const run = (name: string, args: string[]) => runInProcess(args, session.inRepo(session.server.agent(name).env));

describe("cleanup's report", () => {
  test("a dead letter: the dry run says it would return it, the run returns it and says so; its sender gets the bounce", async () => {
    const letter = createMessage("alice", "bob", "review this by noon", new Date(Date.now() - 3_600_000));
    letter.expires_at = new Date(Date.now() - 60_000).toISOString();
    await store.append(letter);
    const dry = await run("carol", ["cleanup", "--dry-run"]);
    expect(dry.code).toBe(0);
    expect(dry.stdout).toContain(`would return ${letter.id} of bob to alice (its time to live ran out`);
    expect((await store.unread("bob")).map((message) => message.id)).toEqual([letter.id]);
    const done = await run("carol", ["cleanup"]);
    expect(done.code).toBe(0);
    expect(done.stdout).toContain(`returned ${letter.id} of bob to alice (its time to live ran out`);
    expect(await store.unread("bob")).toEqual([]);
    const bounces = await store.unread("alice");
    expect(bounces.map((message) => [message.type, message.from])).toEqual([["bounce", "agentmail"]]);
    expect(bounces[0]!.message).toContain(`Your message ${letter.id} to bob was not delivered`);
  });

  test("a claim whose holder went offline: the dry run says it would remove it, the run removes it and says so", async () => {
    expect((await run("alice", ["claim", "src/a.ts"])).code).toBe(0);
    expect((await run("alice", ["status", "offline"])).code).toBe(0);
    const dry = await run("carol", ["cleanup", "--dry-run"]);
    expect(dry.stdout).toContain("would remove the claim on src/a.ts of alice (its holder went offline)\n");
    expect((await store.fileClaims()).claims.map((claim) => claim.path)).toEqual(["src/a.ts"]);
    const done = await run("carol", ["cleanup"]);
    expect(done.code).toBe(0);
    expect(done.stdout).toContain("removed the claim on src/a.ts of alice (its holder went offline)\n");
    expect((await store.fileClaims()).claims).toEqual([]);
  });
});
