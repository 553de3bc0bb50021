/**
 * Addresses that hold, against the compiled binary in private tmux servers: names with spaces and unicode in every
 * address form, `agentmail name` pinning a name tmux would change, a window renamed between a send and a receive,
 * one unknown name stopping a whole list, groups, roles, and a role storm in which 5 members take 1000 messages
 * (5 × 200) at once and each is delivered exactly once.
 */
import { describe, expect, test } from "bun:test";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { am, BINARY, expectError, expectSent, shown, storedMessages } from "../support/e2e.ts";
import { waitFor } from "../support/workflow.ts";
import { createMessage } from "../../src/mail/message.ts";
import { appendMessage } from "../../src/store/file/mailbox.ts";
import { ensureRoot } from "../../src/store/paths.ts";
import { roleQueue, rolesWithQueues } from "../../src/store/file/role-mail.ts";
import { serverWithFreshRepos } from "../support/fresh-repos.ts";

const MEMBERS = ["m1", "m2", "m3", "m4", "m5"];

const world = serverWithFreshRepos("agentmail-addr-", ["alice", "bob smith", "ünï cödé", ...MEMBERS]);

const box = (stem: string) => join(world.repo.mailDir, `${stem}.jsonl`);
const run = (env: Record<string, string>, args: string[]) => am(args, { env, cwd: world.repo.dir });
const as = (name: string) => world.server.agent(name).env;
const windowName = (windowId: string) => world.server.run(["display-message", "-p", "-t", windowId, "#{window_name}"]).replace(/\n$/, "");

/** A window tmux names itself (no -n), with the environment of a process running in its pane. */
function unnamedWindow(): { windowId: string; paneId: string; env: Record<string, string> } {
  const { windowId, paneId } = world.server.addUnnamedWindow(world.scratch);
  return { windowId, paneId, env: { ...as("alice"), TMUX_PANE: paneId } };
}

describe("names with spaces and unicode", () => {
  test("a list, -r, a group and recipients carry them exactly; each copy has the one id", async () => {
    const id = expectSent(await run(as("alice"), ["send", "bob smith,ünï cödé", "hello both"]));
    expect((await run(as("bob smith"), ["receive"])).stdout).toBe(shown("alice", id, "hello both"));
    expect((await run(as("ünï cödé"), ["receive"])).stdout).toBe(shown("alice", id, "hello both"));
    const flagged = expectSent(await run(as("ünï cödé"), ["send", "-r", "bob smith", "-r", "alice", "-m", "flags"]));
    expect((await run(as("alice"), ["receive"])).stdout).toBe(shown("ünï cödé", flagged, "flags"));
    expect((await run(as("alice"), ["group", "add", "wide", "bob smith", "ünï cödé"])).stdout).toBe("wide: bob smith, ünï cödé\n");
    const grouped = expectSent(await run(as("bob smith"), ["send", "@wide", "to the group"]));
    expect((await run(as("ünï cödé"), ["receive"])).stdout).toBe(shown("bob smith", grouped, "to the group"));
    expect((await run(as("bob smith"), ["receive"])).stdout).toBe(shown("ünï cödé", flagged, "flags"));
    expect((await run(as("bob smith"), ["receive"])).stdout).toBe("No unread messages\n");
    expect((await run(as("alice"), ["recipients"])).stdout).toStartWith("alice [you]\nbob smith\nünï cödé\n");
  });

  test("agentmail name takes them too, pinned: a program starting in the window does not rename it", async () => {
    const window = unnamedWindow();
    const named = await run(window.env, ["name", "ünï agent 2"]);
    expect(named).toMatchObject({ code: 0, stdout: "ünï agent 2\n", stderr: "" });
    // The same program starts in a window tmux names itself: once tmux has renamed that one after it, it has had its
    // chance to rename the pinned one too.
    const control = unnamedWindow();
    for (const pane of [window.paneId, control.paneId]) {
      world.server.run(["send-keys", "-t", pane, "-l", "sleep 60"]);
      world.server.run(["send-keys", "-t", pane, "Enter"]);
    }
    const command = (paneId: string) => world.server.run(["display-message", "-p", "-t", paneId, "#{pane_current_command}"]).trim();
    await waitFor(
      () =>
        `sleep to run in the pinned window (${command(window.paneId)}) and tmux to rename the other after it ("${windowName(control.windowId)}")`,
      () => command(window.paneId) === "sleep" && windowName(control.windowId) === "sleep",
    );
    expect(windowName(window.windowId)).toBe("ünï agent 2");
    const id = expectSent(await run(as("alice"), ["send", "ünï agent 2", "pinned"]));
    expect((await run(window.env, ["receive"])).stdout).toBe(shown("alice", id, "pinned"));
    world.server.run(["kill-window", "-t", window.windowId]);
    world.server.run(["kill-window", "-t", control.windowId]);
  });
});

describe("a window renamed between a send and a receive", () => {
  test("tmux renames a window it named: the mail waits under the old name and never reaches the renamed window", async () => {
    const window = unnamedWindow();
    const before = windowName(window.windowId);
    const sent = await run(as("alice"), ["send", before, "for the unnamed window"]);
    expect(sent.code).toBe(0);
    expect(sent.stderr).toContain(`"${before}" is a name tmux chose`);
    // The program changes, and tmux renames the window after it.
    world.server.run(["send-keys", "-t", window.paneId, "-l", "exec sleep 30"]);
    world.server.run(["send-keys", "-t", window.paneId, "Enter"]);
    await waitFor(
      () => `tmux to rename the window after sleep (it is "${windowName(window.windowId)}")`,
      () => windowName(window.windowId) === "sleep",
    );
    expect((await run(window.env, ["receive"])).stdout).toBe("No unread messages\n");
    expectError(await run(as("alice"), ["send", before, "again"]), 1);
    expect(storedMessages(box(before))).toEqual([expect.objectContaining({ message: "for the unnamed window", read_flag: false })]);
    world.server.run(["kill-window", "-t", window.windowId]);
  });

  test("renamed by agentmail name after the send: the mail moves to the new name, once", async () => {
    const window = unnamedWindow();
    const before = windowName(window.windowId);
    const sent = await run(as("alice"), ["send", before, "hand me over"]);
    expect(sent.code).toBe(0);
    const id = sent.stdout.trim();
    const named = await run(window.env, ["name", "carol"]);
    expect(named).toMatchObject({ code: 0, stdout: "carol\n" });
    expect(named.stderr).toBe(`moved 1 unread message sent to your previous name "${before}" to "carol"\n`);
    expect((await run(window.env, ["receive"])).stdout).toBe(shown("alice", id, "hand me over"));
    expect((await run(window.env, ["receive"])).stdout).toBe("No unread messages\n");
    expect(storedMessages(box(before))[0]).toMatchObject({ id, read_flag: true });
    world.server.run(["kill-window", "-t", window.windowId]);
  });
});

describe("many recipients, groups and roles", () => {
  test("one unknown name in a list, or a role with no members, stores nothing anywhere", async () => {
    expect(expectError(await run(as("alice"), ["send", "bob smith,bobb smith", "x"]), 1)).toStartWith(
      'error: no window named "bobb smith"',
    );
    expect(expectError(await run(as("alice"), ["send", "role:nobody", "x"]), 1)).toBe(
      'error: role "nobody" has no members, so no one would take the message; members join it with: agentmail join nobody\n',
    );
    expect(existsSync(world.repo.mailDir) ? storedMessages(box("bob%20smith")) : []).toEqual([]);
  });

  test("a role misspelt: did you mean the role that has members, and nothing stored", async () => {
    expect((await run(as("m2"), ["join", "reviewers"])).code).toBe(0);
    expect(expectError(await run(as("alice"), ["send", "role:reviewer", "x"]), 1)).toBe(
      `error: role "reviewer" has no members; did you mean "role:reviewers"? run 'agentmail roles' to list the roles\n`,
    );
    expect(rolesWithQueues(world.repo.mailDir)).not.toContain("reviewer");
    expect((await run(as("m2"), ["leave", "reviewers"])).code).toBe(0);
  });

  test("@all reaches every other named window once", async () => {
    const id = expectSent(await run(as("m1"), ["send", "@all", "all hands"]));
    for (const name of ["alice", "bob smith", "ünï cödé", "m2", "m5"])
      expect((await run(as(name), ["receive"])).stdout).toBe(shown("m1", id, "all hands"));
    expect((await run(as("m1"), ["receive"])).stdout).toBe("No unread messages\n");
  });

  test("a role storm: 5 members take 1000 role messages (5 × 200) at once; each is delivered exactly once", async () => {
    for (const member of MEMBERS) expect((await run(as(member), ["join", "storm"])).code).toBe(0);
    const connect = async (env: Record<string, string>) => {
      const client = new Client({ name: "storm", version: "1" });
      await client.connect(new StdioClientTransport({ command: BINARY, args: ["mcp"], env, cwd: world.repo.dir, stderr: "pipe" }));
      return client;
    };
    const value = async (client: Client, name: string, args: Record<string, unknown>) => {
      const result = (await client.callTool({ name, arguments: args })) as CallToolResult;
      const [item] = result.content;
      if (item?.type !== "text" || result.isError) throw new Error(`${name} failed: ${JSON.stringify(result)}`);
      return JSON.parse(item.text);
    };
    // The queue is filled first (by the store's own append, as send does), so all five members drain it at once.
    const queue = roleQueue(world.repo.mailDir, "storm");
    const sent = new Set<string>();
    for (let i = 0; i < 1000; i++) {
      const message = createMessage("alice", queue.mailbox, `job ${i}`);
      await appendMessage(ensureRoot(queue.root), message);
      sent.add(message.id);
    }
    expect((await run(as("alice"), ["roles"])).stdout).toBe("storm: m1, m2, m3, m4, m5 (1000 unread)\n");
    const receivers = await Promise.all(MEMBERS.map((member) => connect(as(member))));
    try {
      const taken = await Promise.all(
        receivers.map(async (client) => {
          const mine: string[] = [];
          for (let message = await value(client, "receive", {}); message; message = await value(client, "receive", {}))
            mine.push(message.id);
          return mine;
        }),
      );
      const all = taken.flat();
      expect(all.length).toBe(1000);
      expect(new Set(all)).toEqual(sent);
      // Every member took part: the queue is shared, not one member's.
      expect(taken.filter((mine) => mine.length > 0).length).toBeGreaterThan(1);
      expect((await run(as("alice"), ["roles"])).stdout).toBe("storm: m1, m2, m3, m4, m5 (0 unread)\n");
    } finally {
      for (const client of receivers) await client.close();
    }
  });

  test("role mail through the CLI: 5 members receiving at once as separate processes never get one message twice", async () => {
    for (const member of MEMBERS) await run(as(member), ["join", "triage"]);
    const sent = new Set<string>();
    for (let i = 0; i < 60; i++) sent.add(expectSent(await run(as("alice"), ["send", "role:triage", `bug ${i}`])));
    const drain = async (member: string) => {
      const ids: string[] = [];
      for (;;) {
        const result = await run(as(member), ["receive", "--json"]);
        const message = JSON.parse(result.stdout);
        if (message === null) return ids;
        ids.push(message.id);
      }
    };
    const taken = (await Promise.all(MEMBERS.map(drain))).flat();
    expect(taken.length).toBe(60);
    expect(new Set(taken)).toEqual(sent);
  });
});
