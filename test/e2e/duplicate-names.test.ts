/**
 * Within one store a name means one agent. Two windows with one name (in two sessions of one tmux server, or in one
 * session) would share a mailbox and each could take the other's mail, so send to that name and receive by it fail,
 * naming the panes and how to rename one; a hook stays silent; nothing is delivered or marked read meanwhile.
 */
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, test, setDefaultTimeout } from "bun:test";
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { am, expectError, expectJsonError, expectSent, storedMessages } from "../support/e2e.ts";
import { tempRepo } from "../support/repo.ts";
import { TmuxServer } from "../support/tmux-server.ts";

setDefaultTimeout(30_000);

let server: TmuxServer;
let scratch: string;
let repo: ReturnType<typeof tempRepo>;
/** The pane of the second "bob", in session "other". */
let otherBobPane: string;

const box = (name: string) => join(repo.mailDir, `${name}.jsonl`);
const asPane = (paneId: string) => ({ ...server.agent("alice").env, TMUX_PANE: paneId });
const run = (env: Record<string, string>, args: string[]) => am(args, { env, cwd: repo.dir });

beforeAll(() => {
  scratch = mkdtempSync(join(tmpdir(), "agentmail-dup-"));
  server = TmuxServer.start(["alice", "bob", "carol"], scratch);
  const shell = "bash --norc --noprofile -i";
  otherBobPane = server.run(["new-session", "-d", "-P", "-F", "#{pane_id}", "-s", "other", "-n", "bob", "-c", scratch, shell]).trim();
});
afterAll(() => {
  server?.stop();
  rmSync(scratch, { recursive: true, force: true });
});
beforeEach(() => {
  repo = tempRepo();
});
afterEach(() => repo.remove());

function seedUnread(name: string): void {
  mkdirSync(repo.mailDir, { recursive: true, mode: 0o700 });
  const created_at = "2026-01-01T00:00:00.000Z";
  const line = { id: "Seeded01", from: "alice", to: name, message: "for the real one", read_flag: false, created_at };
  writeFileSync(box(name), JSON.stringify(line) + "\n", { mode: 0o600 });
}

describe("two windows named bob in two sessions", () => {
  const conflict = () =>
    `2 windows are named "bob" (panes ${server.agent("bob").paneId} in session agents, ${otherBobPane} in session other); ` +
    `rename one: tmux rename-window -t ${otherBobPane} <new-name>`;

  test("send to bob fails with exit 1, names both panes and how to rename one, and stores nothing", async () => {
    const error = expectError(await run(server.agent("alice").env, ["send", "bob", "hi"]), 1);
    expect(error).toBe(`error: ${conflict()}\n`);
    expect(existsSync(box("bob"))).toBe(false);
    const json = expectJsonError(await run(server.agent("alice").env, ["send", "bob", "hi", "--json"]), 1);
    expect(json).toEqual({ code: "duplicate_name", message: conflict() });
  });

  test("receive by either bob fails and leaves the mail unread", async () => {
    seedUnread("bob");
    for (const env of [server.agent("bob").env, asPane(otherBobPane)]) {
      expect(expectError(await run(env, ["receive"]), 1)).toBe(`error: ${conflict()}\n`);
    }
    expect(storedMessages(box("bob"))[0]).toMatchObject({ id: "Seeded01", read_flag: false });
  });

  test("receive --hook stays silent with exit 0 and delivers nothing", async () => {
    seedUnread("bob");
    expect(await run(asPane(otherBobPane), ["receive", "--hook"])).toMatchObject({ code: 0, stdout: "", stderr: "" });
    expect(storedMessages(box("bob"))[0]).toMatchObject({ read_flag: false });
  });

  test("other names are unaffected, and recipients still lists the caller's session", async () => {
    const id = expectSent(await run(server.agent("bob").env, ["send", "carol", "bob can still write"]));
    expect((await run(server.agent("carol").env, ["receive"])).stdout).toBe(`From: bob\nID: ${id}\n\nbob can still write\n`);
    expect((await run(server.agent("alice").env, ["recipients"])).stdout).toBe("alice [you]\nbob\ncarol\n");
  });
});

describe("two windows named carol in one session", () => {
  test("send and receive fail until one is renamed, then mail flows", async () => {
    const first = server.agent("carol").paneId;
    const second = server.addWindow("carol", scratch);
    try {
      const error = expectError(await run(server.agent("alice").env, ["send", "carol", "hi"]), 1);
      expect(error).toBe(
        `error: 2 windows are named "carol" (panes ${first} in session agents, ${second.paneId} in session agents); ` +
          `rename one: tmux rename-window -t ${second.paneId} <new-name>\n`,
      );
      expectError(await run(asPane(second.paneId), ["receive"]), 1);
      server.run(["rename-window", "-t", second.paneId, "carol2"]);
      const id = expectSent(await run(server.agent("alice").env, ["send", "carol", "now it is one"]));
      expect((await run(asPane(second.paneId), ["receive"])).stdout).toBe("No unread messages\n");
      expect(storedMessages(box("carol"))[0]).toMatchObject({ id, read_flag: false });
    } finally {
      server.run(["kill-window", "-t", second.windowId]);
    }
  });
});
