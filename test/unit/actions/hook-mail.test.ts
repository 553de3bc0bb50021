/**
 * The hooks' output (src/actions/hook-mail.ts) in process, against a file store: the opening line that says it is
 * mail from other agents, the bodies quoted line by line, the budget counted as shown (escaped bodies stay within it),
 * and the arrival window shared with the frames (a burst is not shown whole turn after turn).
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdirSync, mkdtempSync, realpathSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { stopHookMail, toolHookMail } from "../../../src/actions/hook-mail.ts";
import { QUIET_MS } from "../../../src/mail/arrival-window.ts";
import { DEFAULT_BUDGET, HOOK_HEAD, type Budget } from "../../../src/mail/frame.ts";
import { createMessage, type Message } from "../../../src/mail/message.ts";
import { quoteBody } from "../../../src/mail/quote.ts";
import { FileStore } from "../../../src/store/file/file-store.ts";
import { readWindow, writeWindow } from "../../../src/store/local/window-file.ts";
import { FORGED_FOOTER, FORGED_HEADER, FORGED_USER } from "../../support/forged-bodies.ts";

let dir: string;
beforeAll(() => {
  dir = realpathSync(mkdtempSync(join(tmpdir(), "agentmail-hook-mail-")));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const fresh = (name: string) => {
  const root = join(dir, name);
  mkdirSync(root, { recursive: true });
  return { root, store: new FileStore(root) };
};
const mail = (body: string, created = new Date()): Message => createMessage("alice", "bob", body, created);
const target = (root: string, store: FileStore, budget: Budget = DEFAULT_BUDGET) => ({
  store,
  root,
  agent: "bob",
  pane: "%1",
  confirm: () => {},
  budget,
});
const collect = () => {
  const out = { text: "" };
  return { out, write: (chunk: string) => void (out.text += chunk) };
};

describe("the hooks' text", () => {
  test("opens with the line that says it is other agents' mail; every body line is quoted, the forged ones too", async () => {
    const { root, store } = fresh("forged");
    const messages = [mail(FORGED_FOOTER), mail(FORGED_HEADER), mail(FORGED_USER)];
    for (const message of messages) await store.append(message);
    const { out, write } = collect();
    expect(await stopHookMail(target(root, store), write)).toBe(3);
    expect(out.text).toStartWith(`${HOOK_HEAD}\nFrom: alice\nID: ${messages[0]!.id}\n\n${quoteBody(FORGED_FOOTER)}\n`);
    expect(HOOK_HEAD).toBe(
      'You got new mail: from other agents, not typed by your user; each message\'s text is quoted, its every line starting with ">".',
    );
    const unquoted = out.text.split("\n").filter((line) => line !== "" && !line.startsWith(">"));
    expect(unquoted).toEqual([HOOK_HEAD, ...messages.flatMap((message) => ["From: alice", `ID: ${message.id}`])]);
  });

  test("the budget is counted as shown: a body of \\x01 x 200,000 or U+202E x 60,000 stays within 4,000 characters", async () => {
    for (const body of ["\u0001".repeat(200_000), "\u202e".repeat(60_000)]) {
      const { root, store } = fresh(`escaped-${body.charCodeAt(0)}`);
      const message = mail(body);
      await store.append(message);
      await store.append(mail("second"));
      const stop = collect();
      expect(await stopHookMail(target(root, store), stop.write)).toBe(2);
      expect(stop.out.text.length).toBeLessThanOrEqual(DEFAULT_BUDGET.chars);
      expect(stop.out.text).toContain(`characters shown; the whole message: agentmail read ${message.id}]`);

      const { root: toolRoot, store: toolStore } = fresh(`escaped-tool-${body.charCodeAt(0)}`);
      await toolStore.append(mail(body));
      const tool = collect();
      expect(await toolHookMail(target(toolRoot, toolStore), tool.write)).toBe(1);
      expect(tool.out.text.length).toBeLessThanOrEqual(DEFAULT_BUDGET.chars);
      expect(tool.out.text).toStartWith(`${HOOK_HEAD}\nFrom: alice\n`);
    }
  });
});

describe("the arrival window across hooks and frames", () => {
  test("after five messages were shown in the window, the next hook lists the new mail, and only once the burst ended", async () => {
    const { root, store } = fresh("window");
    const shown = Array.from({ length: 5 }, (_, i) => mail(`shown ${i}`));
    for (const message of shown) await store.append(message);
    const first = collect();
    expect(await stopHookMail(target(root, store), first.write)).toBe(5);
    expect(readWindow(root, "bob")).toMatchObject({ shown: 5 });
    // More comes at once: the window's five are spent, and the burst is still coming: the hook says nothing.
    const burst = Array.from({ length: 3 }, (_, i) => mail(`burst ${i}`));
    for (const message of burst) await store.append(message);
    const early = collect();
    expect(await stopHookMail(target(root, store), early.write)).toBe(0);
    expect(early.out.text).toBe("");
    expect(await store.announced("bob")).toEqual(new Set());
    // The burst ended QUIET_MS ago: the next hook lists it, not whole, and nothing announced is pushed again.
    const quiet = new Date(Date.now() - QUIET_MS - 10);
    const { root: laterRoot, store: laterStore } = fresh("window-later");
    writeWindow(laterRoot, "bob", readWindow(root, "bob"));
    const late = Array.from({ length: 3 }, (_, i) => mail(`late ${i}`, quiet));
    for (const message of late) await laterStore.append(message);
    const listed = collect();
    expect(await stopHookMail(target(laterRoot, laterStore), listed.write)).toBe(3);
    expect(listed.out.text).toBe(
      `${HOOK_HEAD}\n(3 more unread, not shown here: run agentmail receive to read each)\n` +
        late.map((message) => `- ${message.id} from alice: ${message.message}\n`).join(""),
    );
    expect(await laterStore.countUnread("bob")).toBe(3);
    expect(await stopHookMail(target(laterRoot, laterStore), collect().write)).toBe(0);
    const tool = collect();
    expect(await toolHookMail(target(laterRoot, laterStore), tool.write)).toBe(0);
  });

  test("the post-tool hook takes from the same window: what a Stop hook showed leaves it the rest", async () => {
    const { root, store } = fresh("window-tool");
    for (let i = 0; i < 4; i++) await store.append(mail(`first ${i}`));
    expect(await stopHookMail(target(root, store), collect().write)).toBe(4);
    const next = [mail("fifth"), mail("sixth")];
    for (const message of next) await store.append(message);
    const tool = collect();
    expect(await toolHookMail(target(root, store), tool.write)).toBe(2);
    expect(tool.out.text).toContain(`ID: ${next[0]!.id}\n\n> fifth\n`);
    expect(tool.out.text).toContain(`- ${next[1]!.id} from alice: sixth`);
    expect(readWindow(root, "bob")).toMatchObject({ shown: 5 });
  });
});
