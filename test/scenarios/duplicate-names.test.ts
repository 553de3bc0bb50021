/**
 * Within one store a name means one agent. Two windows with one name (in two sessions of one tmux server, or in one
 * session) would share a mailbox and each could take the other's mail, so send to that name and receive by it fail,
 * naming the panes and how to rename one; a hook stays silent; nothing is delivered or marked read meanwhile.
 */
import { describe, expect, test } from "bun:test";
import { existsSync, mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { am, expectError, expectJsonError, expectSent, storedMessages } from "../support/e2e.ts";
import { serverWithFreshRepos } from "../support/fresh-repos.ts";

const world = serverWithFreshRepos("agentmail-dup-", ["alice", "bob", "carol"], (server, scratch) => {
  const shell = "bash --norc --noprofile -i";
  otherBobPane = server.run(["new-session", "-d", "-P", "-F", "#{pane_id}", "-s", "other", "-n", "bob", "-c", scratch, shell]).trim();
});
/** The pane of the second "bob", in session "other". */
let otherBobPane: string;

const box = (name: string) => join(world.repo.mailDir, `${name}.jsonl`);
const asPane = (paneId: string) => ({ ...world.server.agent("alice").env, TMUX_PANE: paneId });
const run = (env: Record<string, string>, args: string[]) => am(args, { env, cwd: world.repo.dir });

function seedUnread(name: string): void {
  mkdirSync(world.repo.mailDir, { recursive: true, mode: 0o700 });
  const created_at = "2026-01-01T00:00:00.000Z";
  const line = { id: "Seeded01", from: "alice", to: name, message: "for the real one", read_flag: false, created_at };
  writeFileSync(box(name), JSON.stringify(line) + "\n", { mode: 0o600 });
}

describe("two windows named bob in two sessions", () => {
  const conflict = () =>
    `2 windows are named "bob" (panes ${world.server.agent("bob").paneId} in session agents, ${otherBobPane} in session other); ` +
    `rename one: tmux rename-window -t ${otherBobPane} <new-name>`;

  test("send to bob fails with exit 1, names both panes and how to rename one, and stores nothing", async () => {
    const error = expectError(await run(world.server.agent("alice").env, ["send", "bob", "hi"]), 1);
    expect(error).toBe(`error: ${conflict()}\n`);
    expect(existsSync(box("bob"))).toBe(false);
    const json = expectJsonError(await run(world.server.agent("alice").env, ["send", "bob", "hi", "--json"]), 1);
    expect(json).toEqual({ code: "duplicate_name", message: conflict() });
  });

  test("receive by either bob fails and leaves the mail unread", async () => {
    seedUnread("bob");
    for (const env of [world.server.agent("bob").env, asPane(otherBobPane)]) {
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
    const id = expectSent(await run(world.server.agent("bob").env, ["send", "carol", "bob can still write"]));
    expect((await run(world.server.agent("carol").env, ["receive"])).stdout).toBe(`From: bob\nID: ${id}\n\n> bob can still write\n`);
    expect((await run(world.server.agent("alice").env, ["recipients"])).stdout).toBe("alice [you]\nbob\ncarol\n");
  });
});

describe("two windows named carol in one session", () => {
  test("send and receive fail until one is renamed, then mail flows", async () => {
    const first = world.server.agent("carol").paneId;
    const second = world.server.addWindow("carol", world.scratch);
    try {
      const error = expectError(await run(world.server.agent("alice").env, ["send", "carol", "hi"]), 1);
      expect(error).toBe(
        `error: 2 windows are named "carol" (panes ${first} in session agents, ${second.paneId} in session agents); ` +
          `rename one: tmux rename-window -t ${second.paneId} <new-name>\n`,
      );
      expectError(await run(asPane(second.paneId), ["receive"]), 1);
      world.server.run(["rename-window", "-t", second.paneId, "carol2"]);
      const id = expectSent(await run(world.server.agent("alice").env, ["send", "carol", "now it is one"]));
      expect((await run(asPane(second.paneId), ["receive"])).stdout).toBe("No unread messages\n");
      expect(storedMessages(box("carol"))[0]).toMatchObject({ id, read_flag: false });
    } finally {
      world.server.run(["kill-window", "-t", second.windowId]);
    }
  });
});
