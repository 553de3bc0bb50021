/**
 * `agentmail inbox` through the command tree in process, in a pane of a private tmux server: unread mail whose time to
 * live ran out is left out of the list (receive returns it to its sender instead of showing it), and the agent is told
 * on stderr how many were left out, in both modes, so the list on stdout stays what receive can show. The listing
 * itself end to end is test/commands/inbox.test.ts.
 */
import { beforeAll, describe, expect, test } from "bun:test";
import { createMessage, type Message } from "../../../src/mail/message.ts";
import { FileStore } from "../../../src/store/file/file-store.ts";
import { runInProcess } from "../../support/in-process.ts";
import { sharedSession } from "../../support/workflow.ts";

const session = sharedSession();
let store: FileStore;
beforeAll(() => {
  store = new FileStore(session.repo.mailDir);
});

const inbox = (name: string, args: string[] = []) => runInProcess(["inbox", ...args], session.inRepo(session.server.agent(name).env));

/** Mail to `to`, unread, whose time to live ran out a minute ago (or runs out in an hour). */
function mail(to: string, body: string, expired: boolean): Message {
  const message = createMessage("alice", to, body, new Date(Date.now() - 2 * 60_000));
  message.expires_at = new Date(Date.now() + (expired ? -60_000 : 3_600_000)).toISOString();
  return message;
}

describe("inbox and mail whose time ran out", () => {
  test("two such messages are left out of the list and counted on stderr; the list shows the rest", async () => {
    const live = mail("bob", "still wanted", false);
    for (const message of [mail("bob", "too late 1", true), live, mail("bob", "too late 2", true)]) await store.append(message);
    const listed = await inbox("bob");
    expect(listed.code).toBe(0);
    expect(listed.stdout.trim().split("\n")).toHaveLength(1);
    expect(listed.stdout).toContain(live.id);
    expect(listed.stdout).not.toContain("too late");
    expect(listed.stderr).toBe(
      "2 unread messages whose time to live ran out are not listed: receive returns such mail to its sender instead of showing it\n",
    );
    const json = await inbox("bob", ["--json"]);
    expect((JSON.parse(json.stdout) as Message[]).map((message) => message.id)).toEqual([live.id]);
    expect(json.stderr).toStartWith("2 unread messages whose time to live ran out are not listed");
  });

  test("one such message is told of in the singular, and an empty list still says so", async () => {
    await store.append(mail("carol", "too late", true));
    expect(await inbox("carol")).toEqual({
      code: 0,
      stdout: "No messages\n",
      stderr: "1 unread message whose time to live ran out is not listed: receive returns such mail to its sender instead of showing it\n",
    });
  });

  test("nothing ran out: nothing on stderr", async () => {
    await store.append(mail("alice", "fresh", false));
    const listed = await inbox("alice");
    expect(listed.stdout).toContain("fresh");
    expect(listed.stderr).toBe("");
  });
});
