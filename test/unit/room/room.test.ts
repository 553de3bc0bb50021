/**
 * The mail room in process (src/room, actions/human.ts): what the person's views show of a store, how it follows
 * changes made by others, and how the person writes as themselves, received by agents like any other mail.
 */
import { beforeEach, describe, expect, test } from "bun:test";
import { acknowledge, archiveOwn, humanContext, humanName, replyAsHuman, requireHuman, sendAsHuman } from "../../../src/actions/human.ts";
import { bounceOf } from "../../../src/mail/bounce.ts";
import { AgentmailError } from "../../../src/mail/errors.ts";
import { createMessage, type Message } from "../../../src/mail/message.ts";
import { deliveryOf } from "../../../src/room/delivery.ts";
import { previewOf } from "../../../src/room/preview.ts";
import { type Room, rowOf, type AgentFacts } from "../../../src/room/room.ts";
import { FileStore } from "../../../src/store/file/file-store.ts";
import { tempRepo } from "../../support/repo.ts";
import { roomFacts, roomsInProcess } from "../../support/room-world.ts";

const world = roomsInProcess();
let repo: ReturnType<typeof tempRepo>;
let store: FileStore;
beforeEach(() => ({ repo, store } = world));

const T0 = Date.parse("2026-01-01T00:00:00.000Z");
let serial = 0;
function mail(from: string, to: string, body: string, fields: object = {}): Message {
  return createMessage(from, to, body, new Date(T0 + ++serial * 1000), fields);
}
async function send(...messages: Message[]): Promise<Message[]> {
  for (const message of messages) await store.append(message);
  return messages;
}

const facts = (extra: Partial<AgentFacts> = {}): (() => Promise<AgentFacts>) =>
  roomFacts({
    pane: (entry) => ({ cli: entry.pane === "%1" ? "claude" : null, open: null, shell: null }),
    reach: (name) => (name === "bob" ? "mailman" : "pull"),
    ...extra,
  });
async function open(human: string | null = "ana"): Promise<Room> {
  return world.open({ human, host: "here", facts: facts(), factsMs: 0 });
}
/** An invocation outside tmux in the test's repository, as the person runs `watch` or `web` from any terminal. */
const invocation = () => ({ cwd: repo.dir, env: { HOME: repo.dir, PATH: process.env.PATH } as Record<string, string | undefined> });

describe("the room", () => {
  test("lists every agent with its status, agent CLI, unread count, last seen and reach; the person's own row is marked", async () => {
    await store.writeStatus({ name: "alice", status: "ready", pane: "%1", at: new Date(T0) });
    await store.writeStatus({ name: "bob", status: "work", pane: "%2", at: new Date(T0) });
    await send(mail("alice", "bob", "one"), mail("alice", "bob", "two"), mail("bob", "carol", "hi"), mail("alice", "role:dev", "q"));
    const room = await open();
    const agents = room.agents();
    expect(agents.map((agent) => agent.name)).toEqual(["alice", "ana", "bob", "carol", "role:dev"]);
    expect(agents[0]).toMatchObject({ status: "ready", cli: "claude", unread: 0, reach: "pull", human: false });
    expect(agents[1]).toMatchObject({ name: "ana", status: null, unread: 0, reach: "room", human: true });
    expect(agents[2]).toMatchObject({ status: "work", cli: null, unread: 2, reach: "mailman" });
    expect(agents[3]).toMatchObject({ status: null, unread: 1, last_seen: null });
    expect(agents[4]).toMatchObject({ unread: 1, reach: "role queue" });
    expect(room.size).toBe(4);
  });

  test("bounces kept for another project's sender (a mailbox named for its address) are mail in the room, no agent's row", async () => {
    const original = mail("alice@app", "bob", "from another project");
    const [kept] = await send({ ...bounceOf(original, "alice@app", "its time to live ran out", new Date(T0)), kept_because: "gone" });
    const room = await open(null);
    expect(room.agents().map((agent) => agent.name)).not.toContain("alice@app");
    expect(room.latest(10).map((item) => item.id)).toEqual([kept!.id]);
  });

  test("the feed is newest first; it filters by agent (sender or recipient) and by text", async () => {
    const [first, second, third] = await send(
      mail("alice", "bob", "deploy the thing"),
      mail("bob", "alice", "done", { subject: "Deployed" }),
      mail("carol", "dave", "unrelated"),
    );
    const room = await open();
    expect(room.latest(10).map((item) => item.id)).toEqual([third!.id, second!.id, first!.id]);
    expect(room.latest(1).map((item) => item.id)).toEqual([third!.id]);
    expect(room.latest(10, { agent: "alice" }).map((item) => item.id)).toEqual([second!.id, first!.id]);
    expect(room.latest(10, { text: "DEPLOY" }).map((item) => item.id)).toEqual([second!.id, first!.id]);
    expect(previewOf(room.item("alice", second!.id)!)).toBe("Deployed");
    expect(rowOf(room.item("bob", first!.id)!)).not.toHaveProperty("body");
  });

  test("a step reports what others changed since: new mail, a read, an archive, a purge, agents", async () => {
    const room = await open();
    expect(await room.step()).toEqual([]);
    const [message] = await send(mail("alice", "bob", "new"));
    const arrived = await room.step();
    expect(arrived.map((event) => event.event)).toEqual(["mail", "agents"]);
    expect(arrived[0]).toMatchObject({ event: "mail", item: { id: message!.id, mailbox: "bob", delivery: { state: "stored" } } });
    await store.take("bob", () => {});
    const read = await room.step();
    expect(read[0]).toMatchObject({ event: "delivery", id: message!.id, mailbox: "bob", delivery: { state: "read" } });
    expect(typeof (read[0] as { delivery: { at: unknown } }).delivery.at).toBe("string");
    await store.archive("bob", { ids: [message!.id] }, false);
    expect(await room.step()).toEqual([{ event: "archived", id: message!.id, mailbox: "bob" }]);
    expect(room.item("bob", message!.id)!.archived).toBe(true);
    await store.purgeArchive("bob", () => true, false);
    const purged = await room.step();
    expect(purged[0]).toEqual({ event: "removed", id: message!.id, mailbox: "bob" });
    expect(room.item("bob", message!.id)).toBeNull();
    await store.writeStatus({ name: "bob", status: "offline", pane: "%2" });
    const agents = await room.step();
    expect(agents).toEqual([
      { event: "agents", agents: expect.arrayContaining([expect.objectContaining({ name: "bob", status: "offline" })]) },
    ]);
  });

  test("a thread is every message of it, oldest first, each with every copy's state; sent mail and search group copies", async () => {
    const [question] = await send(mail("alice", "bob,carol", "placeholder"));
    // Two copies of one message, as a send to two agents stores them.
    const ask = { ...mail("alice", "bob", "who deploys?"), subject: "Deploy" };
    await send(ask, { ...ask, to: "carol" });
    const answer = mail("bob", "alice", "I do", { thread_id: ask.id, in_reply_to: ask.id, subject: "Re: Deploy" });
    await send(answer);
    await store.markRead("carol", ask.id);
    const room = await open();
    const thread = room.thread(answer.id)!;
    expect(thread.map((message) => message.id)).toEqual([ask.id, answer.id]);
    expect(thread[0]!.copies).toEqual([
      { mailbox: "bob", archived: false, delivery: { state: "stored", at: ask.created_at } },
      { mailbox: "carol", archived: false, delivery: { state: "read", at: expect.any(String) } },
    ]);
    expect(room.thread("nosuchid")).toBeNull();
    expect(room.sent("alice").map((message) => message.id)).toEqual([ask.id, question!.id]);
    expect(room.search("deploy", 10).map((message) => message.id)).toEqual([answer.id, ask.id]);
  });

  test("who writes to whom counts every copy on its edge, over the period asked", async () => {
    await send(mail("alice", "bob", "1"), mail("alice", "bob", "2"), mail("bob", "alice", "3"));
    await store.append(createMessage("carol", "bob", "recent"));
    const room = await open();
    expect(room.graph(null)).toEqual({
      since: null,
      nodes: ["alice", "bob", "carol"],
      edges: [
        { from: "alice", to: "bob", count: 2 },
        { from: "bob", to: "alice", count: 1 },
        { from: "carol", to: "bob", count: 1 },
      ],
    });
    expect(room.graph(new Date(Date.now() - 3_600_000)).edges).toEqual([{ from: "carol", to: "bob", count: 1 }]);
  });

  test("a copy is stored until read; a store that records no read time still says read", () => {
    const message = mail("alice", "bob", "x");
    expect(deliveryOf(message)).toEqual({ state: "stored", at: message.created_at });
    expect(deliveryOf({ ...message, read_flag: true })).toEqual({ state: "read", at: null });
  });
});

describe("the person as a sender", () => {
  test("the name comes from --as, else AGENTMAIL_HUMAN; none is null, and a write then says how to set it", () => {
    expect(humanName({ cwd: "/", env: {} })).toBeNull();
    expect(humanName({ cwd: "/", env: { AGENTMAIL_HUMAN: "ana" } })).toBe("ana");
    expect(humanName({ cwd: "/", env: { AGENTMAIL_HUMAN: "ana" } }, "eve")).toBe("eve");
    expect(() => humanName({ cwd: "/", env: { AGENTMAIL_HUMAN: "a,b" } })).toThrow(/AGENTMAIL_HUMAN: .*cannot be an agent's name/);
    expect(() => humanName({ cwd: "/", env: {} }, "x:y")).toThrow(/--as: /);
    expect(() => requireHuman(null)).toThrow(/export AGENTMAIL_HUMAN=<name>/);
  });

  test("mail from the person is stored like a send, from their name, to any registered agent; agents take it like any other", async () => {
    await store.writeStatus({ name: "bob", status: "ready", pane: "%2" });
    const sent = await sendAsHuman(invocation(), "ana", "bob", "please review", { subject: "Review", priority: "high" });
    const taken: Message[] = [];
    await store.take("bob", (message) => void taken.push(message));
    expect(taken).toEqual([expect.objectContaining({ id: sent.id, from: "ana", to: "bob", message: "please review", subject: "Review" })]);
    expect(taken[0]!.priority).toBe("high");
  });

  test("the person cannot take an agent's name, nor write to a name nobody has", async () => {
    await store.writeStatus({ name: "bob", status: "ready", pane: "%2" });
    const taken = await sendAsHuman(invocation(), "bob", "bob", "hi").catch((error: unknown) => error);
    expect(taken).toBeInstanceOf(AgentmailError);
    expect((taken as AgentmailError).code).toBe("name_taken");
    const unknown = await sendAsHuman(invocation(), "ana", "nobody", "hi").catch((error: unknown) => error);
    expect((unknown as AgentmailError).code).toBe("unknown_recipient");
    const bridge = await sendAsHuman(invocation(), "ana", "roo:x", "hi").catch((error: unknown) => error);
    expect((bridge as AgentmailError).message).toContain("bridge");
  });

  test("a reply goes to the sender in its thread and acknowledges the person's copy; acknowledge and archive act on their own mail", async () => {
    const [question] = await send(mail("bob", "ana", "ok to merge?", { subject: "Merge" }));
    const reply = await replyAsHuman(invocation(), "ana", { message: question!, mailbox: "ana" }, "yes");
    expect(reply).toMatchObject({ from: "ana", to: "bob", thread_id: question!.id, in_reply_to: question!.id, subject: "Re: Merge" });
    expect((await store.find("ana", question!.id))!.message.read_flag).toBe(true);
    const [second] = await send(mail("bob", "ana", "and this?"));
    await acknowledge(store, "ana", second!.id);
    expect((await store.find("ana", second!.id))!.message.read_flag).toBe(true);
    expect((await store.deliveries("ana")).get(second!.id)).toMatchObject([{ event: "acknowledged" }]);
    expect((await store.deliveries("ana")).get(question!.id)).toMatchObject([{ event: "acknowledged", reply: reply.id }]);
    await archiveOwn(store, "ana", second!.id);
    expect((await store.find("ana", second!.id))!.archived).toBe(true);
    const context = await humanContext(invocation(), "ana");
    expect(context.caller.name).toBe("ana");
    expect(context.caller.windows.map((window) => window.name)).toEqual([]);
  });
});

describe("problems and what needs the person, as events", () => {
  test("a stalled agent's row and what needs the person change as mail is read; watch --json streams these events", async () => {
    await store.writeStatus({ name: "bob", status: "ready", pane: "%2", at: new Date(T0) });
    await send(mail("alice", "bob", "are you there?"), mail("bob", "ana", "a question for you"));
    const room = await world.open({
      human: "ana",
      host: "here",
      facts: facts(),
      factsMs: 0,
      thresholds: { stalledMs: 60_000, unansweredMs: 60_000 },
    });
    const bob = () => room.agents().find((agent) => agent.name === "bob")!;
    expect(bob().problem).toMatchObject({ kind: "stalled" });
    expect(room.needs().map((need) => [need.kind, need.from])).toEqual([["to-you", "bob"]]);
    await store.take("bob", () => {});
    await store.take("ana", () => {});
    const events = await room.step();
    const agents = events.find((event) => event.event === "agents");
    expect(agents && "agents" in agents && agents.agents.find((agent) => agent.name === "bob")?.problem).toBeNull();
    expect(events).toContainEqual({ event: "needs", needs: [] });
    expect(bob()).toMatchObject({ activity: "read", problem: null });
  });
});

describe("a room of every project", () => {
  test("another project's agents and mail are `name@project`; its copy of this project's person is the person; writes find their store", async () => {
    const lib = tempRepo();
    try {
      const libStore = new FileStore(lib.mailDir);
      await libStore.writeStatus({ name: "librarian", status: "ready", pane: "%7", at: new Date(T0) });
      const [toLib] = [mail("ana@app", "librarian", "rebuild the index")];
      await libStore.append(toLib!);
      await send(mail("alice", "ana", "hello"));
      const room = await world.open({
        human: "ana",
        host: "here",
        facts: facts(),
        factsMs: 0,
        project: "app",
        others: [{ project: "lib", store: libStore }],
      });
      expect(room.agents().map((agent) => [agent.name, agent.project])).toEqual([
        ["alice", "app"],
        ["ana", "app"],
        ["librarian@lib", "lib"],
      ]);
      expect(room.latest(10).map((item) => `${item.from} → ${item.mailbox}`)).toEqual(["alice → ana", "ana → librarian@lib"]);
      expect(room.locate("librarian@lib")).toEqual({ store: libStore, mailbox: "librarian" });
      expect(room.locate("alice")).toEqual({ store, mailbox: "alice" });
      const found = await room.find("librarian@lib", toLib!.id);
      expect(found).toMatchObject({ mailbox: "librarian@lib", message: { from: "ana", message: "rebuild the index" } });
      expect(await room.find("librarian@lib", "nosuchid")).toBeNull();
      await libStore.append(mail("alice@app", "librarian", "and the docs"));
      await room.wait(1000);
      const events = await room.step();
      expect(events).toContainEqual(
        expect.objectContaining({
          event: "mail",
          item: expect.objectContaining({ from: "alice", mailbox: "librarian@lib", body: "and the docs" }),
        }),
      );
    } finally {
      lib.remove();
    }
  });
});
