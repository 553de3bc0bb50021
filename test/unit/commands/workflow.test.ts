import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { createMessage, serializeMessage, type Message } from "../../../src/mail/message.ts";
import { archiveMessages, archivePath } from "../../../src/store/file/archive.ts";
import { appendMessage, countUnread, listMailboxes, takeOldestUnread } from "../../../src/store/file/mailbox.ts";
import { mailboxPath } from "../../../src/store/local/layout.ts";
import { ensureRoot } from "../../../src/store/paths.ts";
import { listStatuses, readStatus, removeStatus, writeStatus } from "../../../src/store/file/status.ts";
import { runInProcess } from "../../support/in-process.ts";
import { tempRepo } from "../../support/repo.ts";
import { TmuxServer } from "../../support/tmux-server.ts";
import { watchWaits } from "../../support/waiters.ts";
import { waitFor } from "../../support/wait.ts";

describe("store for the workflow", () => {
  let repo: ReturnType<typeof tempRepo>;
  let root: string;
  beforeAll(() => {
    repo = tempRepo();
    root = ensureRoot(repo.mailDir);
  });
  afterAll(() => repo.remove());

  test("statuses keep since across repeats and are listed and removed", () => {
    const first = writeStatus(root, { name: "bob smith", status: "ready", pane: "%1", at: new Date("2026-01-01T00:00:00Z") });
    const again = writeStatus(root, { name: "bob smith", status: "ready", pane: "%1", at: new Date("2026-01-01T01:00:00Z") });
    expect(again.since).toBe(first.since);
    expect(again.updated_at).toBe("2026-01-01T01:00:00.000Z");
    const changed = writeStatus(root, { name: "bob smith", status: "work", pane: "%1", at: new Date("2026-01-01T02:00:00Z") });
    expect(changed.since).toBe("2026-01-01T02:00:00.000Z");
    expect(listStatuses(root).map((status) => status.name)).toEqual(["bob smith"]);
    removeStatus(root, "bob smith");
    expect(readStatus(root, "bob smith")).toBeNull();
  });

  test("mailboxes are listed by agent name and unread mail is counted without taking it", async () => {
    await appendMessage(root, createMessage("a", "ünï cödé", "1"));
    await appendMessage(root, createMessage("a", "ünï cödé", "2"));
    writeFileSync(join(root, "not-a-mailbox.txt"), "");
    expect(listMailboxes(root)).toContain("ünï cödé");
    expect(countUnread(root, "ünï cödé")).toBe(2);
    await takeOldestUnread(root, "ünï cödé", () => {});
    expect(countUnread(root, "ünï cödé")).toBe(1);
    expect(countUnread(root, "nobody")).toBe(0);
  });

  test("archiving moves only what it is told, keeps unread and garbage, and removes emptied mailboxes", async () => {
    const path = mailboxPath(root, "carol");
    const oldRead = { ...createMessage("a", "carol", "old", new Date("2020-01-01T00:00:00Z")), read_flag: true };
    const unread = createMessage("a", "carol", "unread", new Date("2020-01-01T00:00:00Z"));
    writeFileSync(path, serializeMessage(oldRead) + "garbage\n" + serializeMessage(unread), { mode: 0o600 });
    const old = { pick: (message: Message) => message.read_flag === true };
    expect(await archiveMessages(root, "carol", old, true)).toEqual({ archived: 1, removed: false });
    expect(readFileSync(path, "utf8")).toContain('"old"');
    expect(await archiveMessages(root, "carol", old, false)).toEqual({ archived: 1, removed: false });
    expect(readFileSync(path, "utf8")).toBe("garbage\n" + serializeMessage(unread));
    expect(readFileSync(archivePath(root, "carol"), "utf8")).toBe(serializeMessage(oldRead));
    const second = { ...oldRead, id: "Second01" };
    writeFileSync(path, serializeMessage(second), { mode: 0o600 });
    expect(await archiveMessages(root, "carol", old, false)).toEqual({ archived: 1, removed: true });
    expect(existsSync(path)).toBe(false);
    expect(await archiveMessages(root, "carol", old, false)).toEqual({ archived: 0, removed: false });
  });
});

describe("workflow commands in a tmux session", () => {
  let repo: ReturnType<typeof tempRepo>;
  let server: TmuxServer;
  const as = (name: string) => ({ env: { TMUX: server.agent(name).env.TMUX, TMUX_PANE: server.agent(name).env.TMUX_PANE }, cwd: repo.dir });

  beforeAll(() => {
    repo = tempRepo();
    server = TmuxServer.start(["alice", "bob", "secret"], repo.dir);
  });
  afterAll(() => {
    server.stop();
    repo.remove();
  });

  test("recipients: own window marked, .agentmailignore hides and refuses", async () => {
    expect((await runInProcess(["recipients"], as("alice"))).stdout).toBe("alice [you]\nbob\nsecret\n");
    writeFileSync(join(repo.dir, ".agentmailignore"), "# hidden windows\n\nsecret\nalice\n");
    expect((await runInProcess(["recipients"], as("alice"))).stdout).toBe("alice [you]\nbob\n");
    expect(JSON.parse((await runInProcess(["recipients", "--json"], as("alice"))).stdout)).toEqual([
      { name: "alice", you: true, auto: false, status: null, last_seen: null },
      { name: "bob", you: false, auto: false, status: null, last_seen: null },
    ]);
    const refused = await runInProcess(["send", "secret", "psst"], as("alice"));
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain("no window named");
  });

  test("status: set, show, JSON, and silent outside tmux", async () => {
    expect((await runInProcess(["status"], as("bob"))).stdout).toStartWith("none");
    expect(await runInProcess(["status", "work"], as("bob"))).toEqual({ code: 0, stdout: "", stderr: "" });
    expect((await runInProcess(["status"], as("bob"))).stdout).toStartWith("work since ");
    expect(JSON.parse((await runInProcess(["status", "--json"], as("bob"))).stdout)).toMatchObject({ name: "bob", status: "work" });
    expect(JSON.parse((await runInProcess(["status", "ready", "--json"], as("bob"))).stdout)).toMatchObject({ status: "ready" });
    expect(await runInProcess(["status", "ready"], { cwd: repo.dir })).toEqual({ code: 0, stdout: "", stderr: "" });
    expect((await runInProcess(["status", "busy"], as("bob"))).code).toBe(1);
    expect((await runInProcess(["status"], { cwd: repo.dir })).code).toBe(2);
  });

  test("onboard teaches the tool in at most 40 lines, in tmux or not", async () => {
    const inside = await runInProcess(["onboard"], as("alice"));
    expect(inside.code).toBe(0);
    expect(inside.stdout).toContain('You are "alice"');
    expect(inside.stdout.trimEnd().split("\n").length).toBeLessThanOrEqual(40);
    for (const word of ["recipients", "send", "receive", "--wait", "ready", "work", "offline"]) expect(inside.stdout).toContain(word);
    for (const command of ["inbox", "reply <id>", "read <id>", "thread <id>"]) expect(inside.stdout).toContain(`agentmail ${command}`);
    expect(inside.stdout).toMatch(/repeat[^\n]*until[^\n]*No unread messages/i);
    const outside = await runInProcess(["onboard"], { cwd: "/" });
    expect(outside.code).toBe(0);
    expect(outside.stdout).toContain("not inside tmux");
    expect(JSON.parse((await runInProcess(["onboard", "--json"], as("alice"))).stdout).name).toBe("alice");
  });

  test("receive --wait is woken by a send, and times out as an empty receive", async () => {
    // A long wait: however slow the send, it lands within it, and the wake ends the wait at once.
    const waits = watchWaits();
    const waiting = runInProcess(["receive", "--wait", "60"], as("bob"));
    await waitFor("bob's receive --wait to wait on its watch", () => waits.begun > 0).finally(() => waits.restore());
    const sent = Bun.spawn([join(import.meta.dir, "../../../dist/agentmail"), "send", "bob", "wake up"], {
      env: server.agent("alice").env,
      cwd: repo.dir,
      stdout: "pipe",
    });
    const id = (await new Response(sent.stdout).text()).trim();
    const woken = await waiting;
    expect(woken.stdout).toBe(`From: alice\nID: ${id}\n\n> wake up\n`);
    expect(await runInProcess(["receive", "--wait", "0.2"], as("bob"))).toEqual({ code: 0, stdout: "No unread messages\n", stderr: "" });
    expect((await runInProcess(["receive", "--wait=x"], as("bob"))).code).toBe(1);
  });

  test("receive warns about lines that are not messages, and still delivers", async () => {
    const sent = await runInProcess(["send", "bob", "after garbage"], as("alice"));
    const path = join(repo.mailDir, "bob.jsonl");
    writeFileSync(path, "not json\n" + readFileSync(path, "utf8"));
    const received = await runInProcess(["receive"], as("bob"));
    expect(received.stdout).toContain(`ID: ${sent.stdout.trim()}`);
    expect(received.stderr).toStartWith("warning: skipped the line at byte 0 of ");
  });

  test("cleanup in plain text: one line per action, 'would' in a dry run", async () => {
    const path = join(repo.mailDir, "old%20timer.jsonl");
    writeFileSync(
      path,
      serializeMessage({ ...createMessage("a", "old timer", "ancient", new Date("2020-01-01T00:00:00Z")), read_flag: true }),
      { mode: 0o600 },
    );
    writeStatus(repo.mailDir, { name: "gone window", status: "ready", pane: "%999" });
    const dry = await runInProcess(["cleanup", "--dry-run"], as("alice"));
    expect(dry.stdout).toBe(
      "would forget status of gone window (window gone)\nwould archive 1 read message of old timer\nwould remove empty mailbox old timer\n",
    );
    const real = await runInProcess(["cleanup"], as("alice"));
    expect(real.stdout).toBe(
      "forgot status of gone window (window gone)\narchived 1 read message of old timer\nremoved empty mailbox old timer\n",
    );
  });

  test("cleanup: dry run reports exactly what the real run does", async () => {
    await runInProcess(["send", "bob", "to be read"], as("alice"));
    await runInProcess(["receive"], as("bob"));
    await runInProcess(["status", "ready"], as("alice"));
    const dry = JSON.parse(
      (await runInProcess(["cleanup", "--read-hours", "0", "--stale-hours", "0", "--dry-run", "--json"], as("alice"))).stdout,
    );
    const real = JSON.parse((await runInProcess(["cleanup", "--read-hours", "0", "--stale-hours", "0", "--json"], as("alice"))).stdout);
    expect({ ...dry, dry_run: false }).toEqual(real);
    expect(real.windows_checked).toBe(true);
    expect(real.forgotten.map((entry: { name: string }) => entry.name).sort()).toEqual(["alice", "bob"]);
    expect((await runInProcess(["cleanup"], as("alice"))).stdout).toBe("Nothing to clean up\n");
    expect((await runInProcess(["cleanup", "--read-hours", "-1"], as("alice"))).code).toBe(1);
  });
});
