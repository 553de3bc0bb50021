/**
 * The hooks' doorbell (store/local/doorbell.ts) as the Stop hook's shell sees it: the installed command, run by `sh -c` with
 * the pane's TMUX and TMUX_PANE, either ends quietly or starts agentmail (here a stand-in that says so). The promise
 * checked: a message sent at any moment of a hook's run — before it, between its steps, during its settling, after
 * it — is shown by that hook or makes the next one start agentmail, which then shows it. And a bell is quieted only
 * when nothing is unread: the agent's mailbox and its roles' queues.
 */
import { afterEach, beforeEach, describe, expect, test } from "bun:test";
import { chmodSync, existsSync, lstatSync, readFileSync, readlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { receiveMail } from "../../../../src/actions/receive.ts";
import { createMessage, type Message } from "../../../../src/mail/message.ts";
import { hookCommand } from "../../../../src/hooks/hook-commands.ts";
import { panePointer } from "../../../../src/mail/doorbell.ts";
import { bellDir } from "../../../../src/store/local/doorbell.ts";
import { FileStore } from "../../../../src/store/file/file-store.ts";
import { tempRepo } from "../../../support/repo.ts";

let repo: ReturnType<typeof tempRepo>;
let store: FileStore;
let env: Record<string, string>;
let standIn: string;

beforeEach(() => {
  repo = tempRepo();
  store = new FileStore(repo.mailDir);
  // A socket path in the test's own directory: the pointer goes beside it. The server pid and pane are made up.
  env = { TMUX: `${repo.dir}/tmux-sock,4242,0`, TMUX_PANE: "%7", PATH: process.env.PATH ?? "/usr/bin:/bin" };
  standIn = join(repo.dir, "agentmail-stand-in");
  writeFileSync(standIn, '#!/bin/sh\necho "started: $*"\n');
  chmodSync(standIn, 0o755);
});
afterEach(() => repo.remove());

/** Runs the installed Stop hook command's shell part: "quiet" when it ended without starting agentmail. */
function shellLook(): "quiet" | "starts agentmail" {
  const result = Bun.spawnSync(["sh", "-c", hookCommand.delivery(standIn)], { env, stdin: "ignore" });
  const out = result.stdout.toString();
  expect(result.exitCode).toBe(0);
  if (out === "") return "quiet";
  expect(out).toBe("started: receive --hook --ready\n");
  return "starts agentmail";
}

const send = (to: string, body: string) => {
  const message = createMessage("alice", to, body);
  return store.append(message, { freshId: true }).then(() => message);
};

/** What `receive --hook` does, step by step; `at` runs a step's neighbour (a send) at the moment named. */
type Moment = "before pointing" | "after pointing" | "after the take" | "after settling";
async function hookRun(name: string, at?: { moment: Moment; act: () => Promise<unknown> }): Promise<Message | null> {
  const maybe = async (moment: Moment) => {
    if (at?.moment === moment) await at.act();
  };
  await maybe("before pointing");
  store.doorbells.point(env, name);
  await maybe("after pointing");
  const message = await receiveMail(store, name, () => {}, { onSkip: () => {} });
  await maybe("after the take");
  await store.doorbells.settle(name);
  await maybe("after settling");
  return message;
}

/** The agent's hooks have run and found nothing: its bell is quiet. */
async function quietBell(name: string): Promise<void> {
  expect(await hookRun(name)).toBeNull();
  expect(shellLook()).toBe("quiet");
}

/** Runs an installed post-tool hook command's shell part: "quiet" when it ended without starting agentmail. */
function afterToolLook(cli: "claude" | "gemini"): "quiet" | "starts agentmail" {
  const result = Bun.spawnSync(["sh", "-c", hookCommand.afterTool(standIn, cli)], { env, stdin: "ignore" });
  const out = result.stdout.toString();
  expect(result.exitCode).toBe(0);
  if (out === "") return "quiet";
  expect(out).toBe(`started: receive --after-tool ${cli}\n`);
  return "starts agentmail";
}

describe("the post-tool hook looks at the same bell", () => {
  test("quiet: it ends without starting agentmail and without marking the agent ready; a send makes it start agentmail", async () => {
    expect(afterToolLook("claude")).toBe("starts agentmail");
    await store.writeStatus({ name: "bob", status: "work", pane: "%7" });
    store.doorbells.point(env, "bob");
    await store.doorbells.settle("bob");
    expect(afterToolLook("claude")).toBe("quiet");
    expect(afterToolLook("gemini")).toBe("quiet");
    expect(existsSync(join(bellDir(repo.mailDir, "bob"), "ready"))).toBe(false);
    expect((await store.status("bob"))!.status).toBe("work");
    await send("bob", "mid-turn");
    expect(afterToolLook("claude")).toBe("starts agentmail");
  });
});

describe("Codex CLI's hooks, run in its daemon, look at the bell of the thread they serve", () => {
  const thread = "01a22560-cd72-7973-96cb-57094cc23428";
  // Every hook the daemon runs has the first TUI's TMUX_PANE (%7 here); the thread is another TUI's, agent "dora".
  const input = (id = thread) =>
    `{"session_id":"${id}","turn_id":"t","cwd":"/repo","hook_event_name":"Stop","last_assistant_message":"${"long ".repeat(3000)}"}`;
  const codexLook = (command: string, stdin: string, expected: string): "quiet" | "starts agentmail" => {
    const stdinFile = join(repo.dir, "hook-input.json");
    writeFileSync(stdinFile, stdin);
    writeFileSync(standIn, '#!/bin/sh\necho "started: $*"\ncat > "$0.stdin"\n');
    const result = Bun.spawnSync(["sh", "-c", `${command} < '${stdinFile}'`], { env });
    expect(result.exitCode).toBe(0);
    const out = result.stdout.toString();
    if (out === "") return "quiet";
    expect(out).toBe(`started: ${expected}\n`);
    // Whatever the shell read of the input is put back: agentmail gets all of it.
    expect(readFileSync(`${standIn}.stdin`, "utf8")).toBe(stdin);
    return "starts agentmail";
  };
  const stopLook = (stdin = input()) => codexLook(hookCommand.deliveryInDaemon(standIn), stdin, "receive --hook --ready");
  const toolLook = (stdin = input()) => codexLook(hookCommand.afterTool(standIn, "codex"), stdin, "receive --after-tool codex");

  test("no thread pointer: agentmail starts with the whole input; once it has looked, both hooks end quietly", async () => {
    expect(stopLook()).toBe("starts agentmail");
    await store.writeStatus({ name: "dora", status: "work", pane: "%8" });
    store.doorbells.point({ ...env, TMUX_PANE: "%8" }, "dora", { id: thread, tmux: env.TMUX! });
    expect(readlinkSync(`${repo.dir}/tmux-sock.agentmail/4242codex-${thread}`)).toBe(bellDir(repo.mailDir, "dora"));
    expect(stopLook()).toBe("starts agentmail");
    await store.doorbells.settle("dora");
    expect(toolLook()).toBe("quiet");
    expect((await store.status("dora"))!.status).toBe("work");
    expect(stopLook()).toBe("quiet");
    // The ready mark is the thread's agent's, not the daemon pane's.
    expect((await store.status("dora"))!.status).toBe("ready");
    await send("dora", "mail for dora");
    expect(toolLook()).toBe("starts agentmail");
    expect(stopLook()).toBe("starts agentmail");
  });

  test("an input that does not start with a thread id, or names another thread, starts agentmail", async () => {
    store.doorbells.point({ ...env, TMUX_PANE: "%8" }, "dora", { id: thread, tmux: env.TMUX! });
    await store.doorbells.settle("dora");
    expect(stopLook()).toBe("quiet");
    expect(stopLook(input("11a22560-cd72-7973-96cb-57094cc23428"))).toBe("starts agentmail");
    expect(stopLook(input("../../../../tmp/x-cd72-7973-96cb-57094cc2342"))).toBe("starts agentmail");
    expect(stopLook(`{"turn_id":"t","session_id":"${thread}"}`)).toBe("starts agentmail");
    expect(stopLook("")).toBe("starts agentmail");
    // Not a thread id: no pointer is made from it.
    store.doorbells.point(env, "dora", { id: "../x", tmux: env.TMUX! });
    expect(existsSync(`${repo.dir}/tmux-sock.agentmail/4242codex-../x`)).toBe(false);
  });
});

describe("the pane's pointer and the bell", () => {
  test("no pointer: the shell starts agentmail; once agentmail has looked and found nothing, the shell ends quietly", async () => {
    expect(shellLook()).toBe("starts agentmail");
    store.doorbells.point(env, "bob");
    const pointer = panePointer(env)!;
    expect(pointer.path).toBe(`${repo.dir}/tmux-sock.agentmail/4242%7`);
    expect(readlinkSync(pointer.path)).toBe(bellDir(repo.mailDir, "bob"));
    // A new bell is rung: nobody has looked at the mail yet.
    expect(shellLook()).toBe("starts agentmail");
    await store.doorbells.settle("bob");
    expect(shellLook()).toBe("quiet");
    expect(lstatSync(pointer.dir).mode & 0o777).toBe(0o700);
  });

  test("the quiet shell marks the agent ready; any status agentmail writes after it is the latest word", async () => {
    await store.writeStatus({ name: "bob", status: "work", pane: "%7" });
    await quietBell("bob");
    const ready = await store.status("bob");
    expect(ready).toMatchObject({ name: "bob", status: "ready", pane: "%7" });
    expect(ready!.since).toBe(ready!.updated_at);
    expect((await store.statuses()).map((entry) => entry.status)).toEqual(["ready"]);
    await store.writeStatus({ name: "bob", status: "work", pane: "%7" });
    expect((await store.status("bob"))!.status).toBe("work");
    expect(existsSync(join(bellDir(repo.mailDir, "bob"), "ready"))).toBe(false);
  });

  test("pointed at another agent's bell (a renamed window), the pane's hook starts agentmail first", async () => {
    await quietBell("bob");
    await send("robert", "for the new name");
    store.doorbells.point(env, "robert");
    expect(shellLook()).toBe("starts agentmail");
    expect((await hookRun("robert"))?.message).toBe("for the new name");
    expect(shellLook()).toBe("quiet");
  });

  test("a bell that is gone, or a pointer to nowhere, starts agentmail", async () => {
    await quietBell("bob");
    const bell = join(bellDir(repo.mailDir, "bob"), "bell");
    Bun.spawnSync(["rm", bell]);
    expect(shellLook()).toBe("starts agentmail");
    // A send to a bell that is gone does not make one (only agentmail, having looked, does).
    await send("bob", "while the bell was gone");
    expect(existsSync(bell)).toBe(false);
    expect((await hookRun("bob"))?.message).toBe("while the bell was gone");
    expect(shellLook()).toBe("quiet");
  });

  test("outside tmux, or with a relative socket path, the shell always starts agentmail", async () => {
    await quietBell("bob");
    for (const tmux of [undefined, "relative/sock,4242,0"]) {
      const saved = env;
      env = { PATH: saved.PATH!, TMUX_PANE: "%7", ...(tmux ? { TMUX: tmux } : {}) };
      expect(shellLook()).toBe("starts agentmail");
      env = saved;
    }
  });
});

describe("a send at every moment of a hook's run", () => {
  const moments: Moment[] = ["before pointing", "after pointing", "after the take", "after settling"];
  for (const moment of moments) {
    test(`${moment}: that hook shows it, or the next hook starts agentmail and shows it`, async () => {
      await quietBell("bob");
      let sent: Message | null = null;
      const shown = await hookRun("bob", { moment, act: async () => (sent = await send("bob", `sent ${moment}`)) });
      if (shown?.id !== sent!.id) {
        expect(shellLook()).toBe("starts agentmail");
        expect((await hookRun("bob"))?.id).toBe(sent!.id);
      }
      expect(shellLook()).toBe("quiet");
    });
  }

  test("during the settling, in either order: the bell is rung afterwards", async () => {
    for (let round = 0; round < 20; round++) {
      await quietBell("bob");
      const [message] = await Promise.all([send("bob", `round ${round}`), store.doorbells.settle("bob")]);
      expect(shellLook()).toBe("starts agentmail");
      expect((await hookRun("bob"))?.id).toBe(message.id);
    }
  });

  test("between the shell's look and its end (the look found it quiet): the next hook starts agentmail", async () => {
    await quietBell("bob");
    expect(shellLook()).toBe("quiet");
    const message = await send("bob", "just after the look");
    expect(shellLook()).toBe("starts agentmail");
    expect((await hookRun("bob"))?.id).toBe(message.id);
  });

  test("with two messages, the bell stays rung until the second is shown", async () => {
    await quietBell("bob");
    await send("bob", "one");
    await send("bob", "two");
    expect((await hookRun("bob"))?.message).toBe("one");
    expect(shellLook()).toBe("starts agentmail");
    expect((await hookRun("bob"))?.message).toBe("two");
    expect(shellLook()).toBe("quiet");
  });
});

describe("roles", () => {
  const joinRole = (name: string, role: string) =>
    store.updateMemberships("roles", (lists) => void lists.set(role, [...(lists.get(role) ?? []), name]));

  test("a message to a role rings each member; joining a role rings the one who joins", async () => {
    await quietBell("bob");
    await joinRole("bob", "triage");
    expect(shellLook()).toBe("starts agentmail");
    await quietBell("bob");
    await store.append(createMessage("alice", "role:triage", "a bug report"), { freshId: true });
    expect(shellLook()).toBe("starts agentmail");
    expect((await hookRun("bob"))?.message).toBe("a bug report");
    expect(shellLook()).toBe("quiet");
  });

  test("mail waiting in a role's queue keeps the bell rung", async () => {
    await joinRole("bob", "triage");
    await store.append(createMessage("alice", "role:triage", "one"), { freshId: true });
    await store.append(createMessage("alice", "role:triage", "two"), { freshId: true });
    expect((await hookRun("bob"))?.message).toBe("one");
    expect(shellLook()).toBe("starts agentmail");
    expect((await hookRun("bob"))?.message).toBe("two");
    expect(shellLook()).toBe("quiet");
  });

  test("roles that cannot be read: a message to a role rings every bell", async () => {
    await quietBell("bob");
    writeFileSync(join(repo.mailDir, ".roles.json"), "{not json");
    await store.append(createMessage("alice", "role:triage", "to whom?"), { freshId: true }).catch(() => {});
    expect(readFileSync(join(bellDir(repo.mailDir, "bob"), "bell")).length).toBeGreaterThan(0);
  });
});
