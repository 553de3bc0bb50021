/**
 * The person as a sender (src/actions/human.ts), outside tmux, against a private tmux server holding this project's
 * windows (app: alice, bob) and another project's (lib: carol): the compose form's check of a To, resolved exactly as
 * its send would be and storing nothing (this project's agent, a role queue, another project's agent by address or by
 * a name only it has, with the warning the send gives); bridges refused; a reply to another project's agent, to a
 * sender nothing names any more, and to the person's own mail; a name an agent's window carries, or a registered
 * agent's, refused to the person. Sending, a reply within the project, acknowledging and registering as the person are
 * test/unit/room/room.test.ts.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, realpathSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { checkAsHuman, humanContext, registerHuman, replyAddressee, replyAsHuman } from "../../../src/actions/human.ts";
import { createMessage } from "../../../src/mail/message.ts";
import { FileStore } from "../../../src/store/file/file-store.ts";
import { rejectionOf } from "../../support/rejection.ts";
import { runInProcess } from "../../support/in-process.ts";
import { type Panes, repository, session } from "../../support/projects.ts";
import { outsideTmuxEnv, TmuxServer } from "../../support/tmux-server.ts";

let root: string;
let app: string;
let lib: string;
let server: TmuxServer;
const panes: Panes = new Map();

beforeAll(async () => {
  root = realpathSync(mkdtempSync(join(tmpdir(), "agentmail-human-")));
  app = repository(root, "app");
  lib = repository(root, "lib");
  server = TmuxServer.start(["shell"], root);
  session(server, panes, "app", "app", app, ["alice", "bob"]);
  session(server, panes, "lib", "lib", lib, ["carol"]);
  // bob registers as its session start does: the person's views then look at this server.
  const registered = await runInProcess(["status", "ready"], {
    env: { ...server.agent("shell").env, TMUX_PANE: panes.get("bob@app")!.pane },
    cwd: app,
  });
  expect(registered.code).toBe(0);
  await runInProcess(["join", "reviewers"], { env: { ...server.agent("shell").env, TMUX_PANE: panes.get("alice@app")!.pane }, cwd: app });
});
afterAll(() => {
  server.stop();
  rmSync(root, { recursive: true, force: true });
});

/** The person, running `web` or `watch` from a terminal outside tmux, in this project. */
const person = () => ({ cwd: app, env: outsideTmuxEnv({ HOME: root }) });

describe("the check of a compose's To", () => {
  test("resolves this project's agent, a role queue and another project's agent as the send would, storing nothing", async () => {
    const checked = await checkAsHuman(person(), "ana", "bob,role:reviewers,carol@lib");
    expect(checked).toEqual({ to: ["bob", "role:reviewers", "carol@lib"], warnings: [] });
    expect(await new FileStore(join(app, ".git", "mail")).mailboxes()).toEqual([]);
    expect(await new FileStore(join(lib, ".git", "mail")).mailboxes()).toEqual([]);
  });

  test("a name only another project has goes there, with the warning the send would give", async () => {
    const checked = await checkAsHuman(person(), "ana", "carol");
    expect(checked.to).toEqual(["carol@lib"]);
    expect(checked.warnings).toEqual([
      `"carol" is no agent of this project; it works in project "lib" (${lib}), so the message went into that project's mail, ` +
        "where it receives; its reply comes back here (to be explicit: carol@lib)",
    ]);
  });

  test("a bridge's address is refused: the room sends through no bridge", async () => {
    const error = await rejectionOf(checkAsHuman(person(), "ana", "feat124:someone"));
    expect(error.code).toBe("usage");
    expect(error.message).toBe(
      '"feat124:" addresses go through a bridge, which the room does not send to; use agentmail send in a tmux window',
    );
  });

  test("a name no agent has is refused as the send would refuse it", async () => {
    expect((await rejectionOf(checkAsHuman(person(), "ana", "nobody"))).code).toBe("unknown_recipient");
  });
});

describe("the person's name", () => {
  test("a name this project's window carries (registered or not) is an agent's: refused, to write and to come in", async () => {
    for (const name of ["alice", "bob"]) {
      const error = await rejectionOf(humanContext(person(), name));
      expect(error.code).toBe("name_taken");
      expect(error.message).toStartWith(
        `"${name}" is an agent's name, not yours to use; set your name once: export AGENTMAIL_HUMAN=<name>`,
      );
    }
    const store = new FileStore(join(app, ".git", "mail"));
    expect((await rejectionOf(registerHuman(person(), store, "alice", "ready"))).code).toBe("name_taken");
    expect(await store.status("alice")).toBeNull();
  });

  test("a registered agent's name with no window here (another host's, say) is refused too; the person's own registration is not", async () => {
    const store = new FileStore(join(app, ".git", "mail"));
    await store.writeStatus({ name: "dave", status: "ready", pane: "%7" });
    expect((await rejectionOf(humanContext(person(), "dave"))).code).toBe("name_taken");
    await registerHuman(person(), store, "ana", "ready");
    expect((await humanContext(person(), "ana")).caller.name).toBe("ana");
    await store.removeStatus("dave");
    await store.removeStatus("ana");
  });

  test("another project's window of a name does not take it here", async () => {
    const context = await humanContext(person(), "carol");
    expect(context.caller.name).toBe("carol");
  });
});

describe("the person's reply", () => {
  const appStore = () => new FileStore(join(app, ".git", "mail"));

  test("to mail from another project's agent: it lands in that project's store, in the thread; the person's copy is acknowledged", async () => {
    const question = createMessage("carol@lib", "ana", "may I bump the lib version?", new Date(), { subject: "Bump" });
    await appStore().append(question);
    const reply = await replyAsHuman(person(), "ana", { message: question, mailbox: "ana" }, "go ahead");
    const [arrived, ...more] = await new FileStore(join(lib, ".git", "mail")).unread("carol");
    expect(more).toEqual([]);
    expect(arrived).toMatchObject({
      id: reply.id,
      from: "ana@app",
      to: "carol",
      message: "go ahead",
      subject: "Re: Bump",
      thread_id: question.id,
      in_reply_to: question.id,
    });
    expect((await appStore().find("ana", question.id))!.message.read_flag).toBe(true);
    expect(await appStore().unread("carol")).toEqual([]);
  });

  test("to a sender no window or registration names any more: it wrote to the store, so its mailbox gets the reply", async () => {
    const question = createMessage("ghost", "ana", "still there?");
    await appStore().append(question);
    const reply = await replyAsHuman(person(), "ana", { message: question, mailbox: "ana" }, "yes");
    expect((await appStore().unread("ghost")).map((message) => [message.id, message.from, message.in_reply_to])).toEqual([
      [reply.id, "ana", question.id],
    ]);
  });

  test("to the person's own mail: to its recipient, and the recipient's copy stays unread", async () => {
    const own = createMessage("ana", "bob", "please look at the failing test");
    await appStore().append(own);
    expect(replyAddressee({ message: own, mailbox: "bob" }, "ana")).toBe("bob");
    const reply = await replyAsHuman(person(), "ana", { message: own, mailbox: "bob" }, "it is test/unit/x.test.ts");
    expect((await appStore().unread("bob")).map((message) => [message.id, message.in_reply_to])).toEqual([
      [own.id, undefined],
      [reply.id, own.id],
    ]);
  });
});

describe("the person outside tmux, beside agents known only by their registration", () => {
  test("a registered agent with no window is another agent, not the person: @all reaches it", async () => {
    // dave registered from a pane that has closed since: the person's view has no window for him, only his entry.
    await new FileStore(join(app, ".git", "mail")).writeStatus({ name: "dave", status: "ready", pane: "%999" });
    try {
      const checked = await checkAsHuman(person(), "ana", "@all");
      expect(checked.to).toContain("dave");
    } finally {
      await new FileStore(join(app, ".git", "mail")).removeStatus("dave");
    }
  });
});
