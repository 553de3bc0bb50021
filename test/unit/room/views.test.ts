/**
 * The person's views in process: the screen's fitting and escaping, the key decoder, `watch`'s layout and keys
 * (compose, reply, filters, thread), its snapshot and event stream, and the web server's rules (token, host,
 * origin, CSP, read-only, writes in a header) and data. The real terminal and the real browser are in
 * test/commands/watch.test.ts and test/commands/web.test.ts.
 */
import { beforeEach, describe, expect, test } from "bun:test";
import { createMessage, type Message } from "../../../src/mail/message.ts";
import { EventEmitter } from "node:events";
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { decodeKeys, readKeys, type Key } from "../../../src/input/keys.ts";
import { fit, openScreen, plainLines, renderLine, takeColumns, type Line } from "../../../src/output/screen.ts";
import { printJson, setSink } from "../../../src/output/streams.ts";
import type { Room } from "../../../src/room/room.ts";
import type { FileStore } from "../../../src/store/file/file-store.ts";
import { WatchApp } from "../../../src/watch/app.ts";
import { snapshotJson, snapshotText, streamEvents } from "../../../src/watch/once.ts";
import { clock, wrap } from "../../../src/watch/view.ts";
import { WebApp } from "../../../src/web/server.ts";
import { runInProcess } from "../../support/in-process.ts";
import type { tempRepo } from "../../support/repo.ts";
import { roomsInProcess, roomFacts } from "../../support/room-world.ts";
import { waitFor } from "../../support/workflow.ts";

const ESC = "\u001b";
/** Anything a terminal would act on. */
const ACTIVE = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/;
const HOSTILE = `title ${ESC}]0;pwned\u0007 clear ${ESC}[2J\rover\b c1 \u009b2J bidi \u202eevil`;

const world = roomsInProcess();
let repo: ReturnType<typeof tempRepo>;
let store: FileStore;
beforeEach(() => ({ repo, store } = world));

async function open(human: string | null = "ana"): Promise<Room> {
  return world.open({ human, host: "here", facts: roomFacts() });
}
const invocation = () => ({ cwd: repo.dir, env: { HOME: repo.dir, PATH: process.env.PATH } as Record<string, string | undefined> });
async function send(message: Message): Promise<Message> {
  await store.append(message);
  return message;
}
const text = (lines: Line[], width = 80) => plainLines(lines, width);

const until = <T>(what: string, check: () => T | Promise<T>) => waitFor(what, check, 30_000, 20);

describe("the screen", () => {
  test("text is cut to the width with an ellipsis, wide characters count two columns, combining marks none", () => {
    expect(fit("hello", 10)).toEqual({ text: "hello", columns: 5 });
    expect(fit("hello world", 8)).toEqual({ text: "hello w…", columns: 8 });
    expect(fit("日本語の文", 6)).toEqual({ text: "日本…", columns: 5 });
    expect(fit("e\u0301e\u0301", 2)).toEqual({ text: "e\u0301e\u0301", columns: 2 });
    expect(takeColumns("日本語", 3)).toEqual(["日", "本語"]);
    expect(takeColumns("abc", 0)).toEqual(["a", "bc"]);
  });

  test("a line never carries a control character from its text: escapes are shown, not acted on; colour only when asked", () => {
    const line: Line = { segments: [{ text: HOSTILE, style: "red" }], style: "reverse" };
    const plain = renderLine(line, 200, false);
    expect(ACTIVE.test(plain)).toBe(false);
    expect(plain).toContain("\\x1b]0;pwned\\x07");
    expect(plain).toContain("\\u202eevil");
    const coloured = renderLine(line, 200, true);
    // The only escapes are the screen's own SGR sequences.
    expect(coloured.replace(/\u001b\[[0-9;]*m/g, "")).toBe(plain);
  });

  test("keys: arrows in both cursor modes, pages, enter, Ctrl-J, escape, backspace, Ctrl-C, typed and pasted text", () => {
    expect(
      decodeKeys(`${ESC}[A${ESC}OB${ESC}[5~${ESC}[6~\r\n${ESC}\u007f\u0003ab日`).map((key) => ("char" in key ? key.char : key.name)),
    ).toEqual(["up", "down", "pageup", "pagedown", "enter", "newline", "escape", "backspace", "ctrl-c", "a", "b", "日"]);
    // Sequences the view has no use for, and C1 controls, are dropped whole.
    expect(decodeKeys(`${ESC}[1;5Cx\u009by`).map((key) => ("char" in key ? key.char : key.name))).toEqual(["x", "y"]);
  });

  test("the screen enters the alternate screen, draws every row fitted and cleared to its end, and gives the terminal back", () => {
    let out = "";
    setSink({ stdout: (chunk) => void (out += chunk), stderr: () => {} });
    try {
      const terminal = Object.assign(new EventEmitter(), { columns: 30, rows: 5 });
      let resized = 0;
      const screen = openScreen(() => resized++, terminal, {});
      expect(out).toBe("\u001b[?1049h\u001b[?25l\u001b[H\u001b[2J");
      out = "";
      screen.draw([{ segments: [{ text: `hi ${ESC}[2J`, style: "bold" }] }]);
      expect(out).toBe(`\u001b[H\u001b[1mhi \\x1b[2J\u001b[0m\u001b[K${"\r\n\u001b[K".repeat(4)}`);
      terminal.emit("resize");
      expect(resized).toBe(1);
      out = "";
      screen.close();
      screen.close();
      expect(out).toBe("\u001b[0m\u001b[?25h\u001b[?1049l");
      terminal.emit("resize");
      expect(resized).toBe(1);
      const plain = openScreen(() => {}, terminal, { NO_COLOR: "1" });
      out = "";
      plain.draw([{ segments: [{ text: "x", style: "red" }], style: "reverse" }]);
      expect(out).not.toContain("\u001b[1m");
      expect(out.startsWith("\u001b[Hx")).toBe(true);
      plain.close();
    } finally {
      setSink(null);
    }
  });

  test("keys are read from the terminal in raw mode until closed, which gives cooked mode back", () => {
    const calls: string[] = [];
    const stdin = Object.assign(new EventEmitter(), {
      setRawMode: (raw: boolean) => calls.push(`raw ${raw}`),
      setEncoding: () => calls.push("utf8"),
      resume: () => calls.push("resume"),
      pause: () => calls.push("pause"),
    });
    const keys: Key[] = [];
    const input = readKeys((key) => keys.push(key), stdin);
    stdin.emit("data", `q${ESC}[B`);
    input.close();
    stdin.emit("data", "x");
    expect(keys).toEqual([{ name: "char", char: "q" }, { name: "down" }]);
    expect(calls).toEqual(["raw true", "utf8", "resume", "raw false", "pause"]);
  });

  test("a body is wrapped to the width, its tabs as spaces, its control characters escaped", () => {
    expect(wrap("abcdef\n\tx", 4)).toEqual(["abcd", "ef", "    ", "x"]);
    expect(wrap(`a${ESC}[2J`, 80)).toEqual(["a\\x1b[2J"]);
    expect(clock("not a time", new Date())).toBe("?");
    expect(clock("2020-01-02T03:04:05.000Z", new Date())).toMatch(/^01-02 \d\d:04$/);
  });
});

describe("watch", () => {
  test("the screen at 80×24: header, agents, the feed newest first with states, the keys; nothing wider than 80", async () => {
    await store.writeStatus({ name: "bob", status: "ready", pane: "%2" });
    const first = await send(createMessage("alice", "bob", "first", new Date(Date.now() - 2000)));
    await send(createMessage("alice", "bob", HOSTILE, new Date(Date.now() - 1000), { type: "task", priority: "urgent" }));
    await store.markRead("bob", first.id);
    const app = new WatchApp(await open(), { invocation: invocation(), human: "ana", store: "file x" });
    const screen = text(app.lines(80, 24));
    const lines = screen.split("\n");
    expect(lines[0]).toBe("agentmail watch · as ana · 3 agents · 2 copies · file x");
    expect(lines[1]).toMatch(/^ {2}AGENT\s+STATUS\s+CLI\s+UNREAD\s+SEEN\s+REACH OR PROBLEM$/);
    expect(screen).toMatch(/> \d\d:\d\d:\d\d alice\s+→ bob\s+!\s+task\s+title \\x1b\]0;pwned\\x0…\s+stored\n/);
    expect(screen).toMatch(/ {2}\d\d:\d\d:\d\d alice\s+→ bob\s+first\s+read\n/);
    expect(lines[23]).toContain("enter thread");
    expect(ACTIVE.test(screen)).toBe(false);
    for (const line of lines) expect([...line].length).toBeLessThanOrEqual(80);
  });

  test("keys move, open the thread, filter and search; Esc goes back and clears", async () => {
    const old = await send(createMessage("alice", "bob", "about deploys", new Date(Date.now() - 2000)));
    await send(createMessage("carol", "dave", "lunch?", new Date(Date.now() - 1000)));
    const app = new WatchApp(await open(), { invocation: invocation(), human: "ana", store: "file x" });
    app.lines(80, 24);
    app.type("j");
    expect(text(app.lines(80, 24))).toMatch(/> \S+ alice\s+→ bob/);
    app.type("\r");
    const thread = text(app.lines(80, 24));
    expect(thread).toContain(`alice → bob (stored)`);
    expect(thread).toContain(`${old.id}`);
    expect(thread).toContain("  about deploys");
    app.type(ESC);
    app.type("/deploy\r");
    const searched = text(app.lines(80, 24));
    expect(searched).toContain('text "deploy"');
    expect(searched).not.toContain("lunch?");
    app.type(ESC);
    app.type("acarol\r");
    expect(text(app.lines(80, 24))).not.toContain("about deploys");
    app.type(ESC);
    expect(text(app.lines(80, 24))).toContain("about deploys");
  });

  test("c composes as the person (to, subject, body with Ctrl-J new lines); r replies to the selected message", async () => {
    await store.writeStatus({ name: "bob", status: "ready", pane: "%2" });
    const question = await send(createMessage("bob", "ana", "ready to merge?", new Date(), { subject: "Merge" }));
    const room = await open();
    const app = new WatchApp(room, { invocation: invocation(), human: "ana", store: "file x" });
    app.lines(80, 24);
    app.type("cbob\rStatus\rline one\nline two\r");
    await until("the send", () => /sent \w{8} to bob/.test(text(app.lines(80, 24))));
    const taken: Message[] = [];
    await store.take("bob", (message) => void taken.push(message));
    expect(taken[0]).toMatchObject({ from: "ana", to: "bob", subject: "Status", message: "line one\nline two" });
    await room.step();
    app.type("G");
    expect(text(app.lines(80, 24))).toMatch(/> \S+ bob\s+→ ana/);
    app.type("rno, wait\r");
    await until("the reply", () => /replied \w{8} to bob/.test(text(app.lines(80, 24))));
    const reply: Message[] = [];
    await store.take("bob", (message) => void reply.push(message));
    expect(reply[0]).toMatchObject({ from: "ana", to: "bob", in_reply_to: question.id, subject: "Re: Merge", message: "no, wait" });
  });

  test("without the person's name, writing is refused with how to set it, and the room still shows", async () => {
    const app = new WatchApp(await open(null), { invocation: invocation(), human: null, store: "file x" });
    app.lines(80, 24);
    app.type("c");
    const screen = text(app.lines(200, 24), 200);
    expect(screen).toContain("export AGENTMAIL_HUMAN=<name>");
    expect(screen.split("\n")[0]).toContain("read-only (no AGENTMAIL_HUMAN)");
  });

  test("--once prints the snapshot; --json prints it as one document, and the stream prints each event as a line", async () => {
    await send(createMessage("alice", "bob", HOSTILE));
    const room = await open();
    const header = { store: "file x", human: "ana", copies: room.size };
    const once = snapshotText(room, header, 20, 100, false);
    expect(once).toContain("alice");
    expect(ACTIVE.test(once)).toBe(false);
    let out = "";
    setSink({ stdout: (chunk) => void (out += chunk), stderr: () => {} });
    try {
      printJson(snapshotJson(room, header, 20));
      const snapshot = JSON.parse(out);
      expect(snapshot.feed[0]).toMatchObject({ from: "alice", mailbox: "bob", body: HOSTILE });
      out = "";
      let stop = () => {};
      const stopped = new Promise<void>((resolve) => {
        stop = resolve;
      });
      const streaming = streamEvents(room, stopped, 50);
      await send(createMessage("carol", "bob", "live"));
      await until("the event", () => out.includes('"event":"mail"'));
      stop();
      await streaming;
      const events = out
        .trim()
        .split("\n")
        .map((line) => JSON.parse(line));
      expect(events[0].event).toBe("agents");
      expect(events.find((event) => event.event === "mail").item).toMatchObject({ from: "carol", body: "live" });
    } finally {
      setSink(null);
    }
  });
});

describe("watch: the supervisor's keys", () => {
  test("Tab gives the agents the keys; ↓/End reach the last, Enter shows its mail, p shows only problems", async () => {
    for (const name of ["alice", "bob", "carol", "dave", "erin", "frank", "grace", "heidi", "zoe"])
      await store.writeStatus({ name, status: "ready", pane: "%9" });
    await send(createMessage("alice", "zoe", "for zoe", new Date(Date.now() - 1000)));
    const app = new WatchApp(await open(), { invocation: invocation(), human: "ana", store: "file x" });
    const screen = () => text(app.lines(80, 24));
    expect(screen()).toMatch(/ {2}AGENT 1-6\/10 /);
    expect(screen()).not.toMatch(/^. zoe\s/m);
    app.type("\t");
    app.type(`${ESC}[F`);
    expect(screen()).toMatch(/> zoe\s/);
    expect(screen()).toMatch(/ {2}AGENT 5-10\/10 /);
    app.type("\r");
    expect(screen()).toContain("── mail · agent zoe · 1 of 1 copies · esc clears");
    app.type("p");
    expect(screen()).not.toMatch(/^. alice\s/m);
    app.type("p");
    expect(screen()).toMatch(/alice\s/);
  });

  test("n lists what needs the person, Enter opens its thread; l shows the claims and the mailman; Esc goes back", async () => {
    const question = await send(createMessage("bob", "ana", "may I merge?", new Date(), { subject: "Merge" }));
    const app = new WatchApp(await open(), { invocation: invocation(), human: "ana", store: "file x" });
    const screen = () => text(app.lines(80, 24));
    expect(screen()).toContain("── needs you (1) · n shows all");
    app.type("n");
    expect(screen()).toMatch(/> to you\s+bob\s+→ ana\s+Merge/);
    app.type("\r");
    expect(screen()).toContain(question.id);
    app.type(ESC);
    app.type(ESC);
    app.type("l");
    expect(screen()).toContain("── claims (0)");
    expect(screen()).toContain("No claims.");
    app.type(ESC);
    expect(screen()).toContain("── mail ·");
  });

  test("a To nobody has is refused when Enter is pressed, whole, and stays to be corrected; a failed send keeps the message", async () => {
    await store.writeStatus({ name: "bob", status: "ready", pane: "%2" });
    const app = new WatchApp(await open(), { invocation: invocation(), human: "ana", store: "file x" });
    const screen = () => text(app.lines(80, 24));
    app.type("cbobb\r");
    await app.settled();
    expect(screen()).toContain('cannot send to bobb: no window named "bobb"');
    // What to do next in the room's terms (mail/next-steps.ts), not the CLI's ('run agentmail recipients').
    expect(screen().replace(/\s+/g, " ")).toContain(
      `cannot send to bobb: no window named "bobb" in this tmux session; did you mean "bob"? pick a name from the room's agent list, or write name@project for another project's agent`,
    );
    expect(screen()).not.toContain("agentmail recipients");
    expect(screen().trimEnd().split("\n").at(-1)).toBe("To (name, name@project, a,b, @all, @GROUP, role:ROLE): bobb▏");
    app.type("\u007f\r");
    await app.settled();
    expect(screen()).toContain("to bob");
    app.type("\r");
    // The store refuses the write: bob's mailbox is a directory.
    mkdirSync(join(repo.mailDir, "bob.jsonl"));
    app.type("kept\r");
    await until("the failure", () => screen().includes("not sent (your message is kept"));
    expect(screen().trimEnd().split("\n").at(-1)).toBe("Message (Ctrl-J new line, Enter sends): kept▏");
  });
});

describe("web", () => {
  const TOKEN = "t0ken-of-this-run";
  async function web(options: { readOnly?: boolean; human?: string | null } = {}): Promise<WebApp> {
    const human = options.human === undefined ? "ana" : options.human;
    const app = new WebApp(await open(human), { invocation: invocation(), human, readOnly: options.readOnly ?? false, token: TOKEN });
    app.port = 4321;
    return app;
  }
  const get = (app: WebApp, path: string, headers: Record<string, string> = {}) =>
    app.handle(new Request(`http://127.0.0.1:4321${path}`, { headers: { host: "127.0.0.1:4321", ...headers } }));
  const post = (app: WebApp, path: string, body: unknown, headers: Record<string, string> = { "x-agentmail-token": TOKEN }) =>
    app.handle(
      new Request(`http://127.0.0.1:4321${path}?token=${TOKEN}`, {
        method: "POST",
        headers: { host: "127.0.0.1:4321", "content-type": "application/json", ...headers },
        body: JSON.stringify(body),
      }),
    );

  test("every request needs the token; the page is a shell with no inline script under a strict CSP", async () => {
    const app = await web();
    for (const path of ["/", "/?token=wrong", "/api/room", "/events", "/app.js?token=x"]) {
      const response = await get(app, path);
      expect(response.status).toBe(403);
      expect(await response.text()).toContain("needs the token");
    }
    const page = await get(app, `/?token=${TOKEN}`);
    expect(page.status).toBe(200);
    const csp = page.headers.get("content-security-policy")!;
    expect(csp).toContain("script-src 'self'");
    expect(csp).toContain("require-trusted-types-for 'script'");
    expect(csp).toContain("frame-ancestors 'none'");
    expect(page.headers.get("referrer-policy")).toBe("no-referrer");
    const html = await page.text();
    expect(html).toMatch(/<script src="\/app\.js\?token=t0ken-of-this-run" defer><\/script>/);
    expect(html).not.toMatch(/<script>/);
    const script = await (await get(app, `/app.js?token=${TOKEN}`)).text();
    for (const sink of ["innerHTML", "outerHTML", "insertAdjacentHTML", "document.write", "eval("]) expect(script).not.toContain(sink);
    expect((await get(app, `/app.css?token=${TOKEN}`)).headers.get("content-type")).toContain("text/css");
  });

  test("another host name (DNS rebinding) or another site's origin is refused", async () => {
    const app = await web();
    expect((await get(app, `/?token=${TOKEN}`, { host: "evil.example:4321" })).status).toBe(421);
    expect((await get(app, `/?token=${TOKEN}`, { origin: "http://evil.example" })).status).toBe(403);
    expect((await get(app, `/?token=${TOKEN}`, { host: "localhost:4321", origin: "http://localhost:4321" })).status).toBe(200);
  });

  test("the room, a mailbox, a thread, sent mail, search and the graph as JSON; list rows carry no body", async () => {
    await store.writeStatus({ name: "bob", status: "ready", pane: "%2" });
    const message = await send(createMessage("alice", "bob", "<script>alert(1)</script>", new Date(), { subject: "S" }));
    const app = await web();
    const json = async (path: string): Promise<any> => (await get(app, `${path}${path.includes("?") ? "&" : "?"}token=${TOKEN}`)).json();
    const room = await json("/api/room");
    expect(room).toMatchObject({ human: "ana", readOnly: false, copies: 1 });
    expect(room.feed[0]).toMatchObject({ id: message.id, preview: "S" });
    expect(room.feed[0].body).toBeUndefined();
    expect((await json("/api/mailbox?name=bob")).items[0].id).toBe(message.id);
    expect((await json(`/api/thread?id=${message.id}`)).messages[0].body).toBe("<script>alert(1)</script>");
    expect((await json("/api/sent?name=alice")).messages[0].copies).toEqual([
      { mailbox: "bob", archived: false, delivery: { state: "stored", at: message.created_at } },
    ]);
    expect((await json("/api/search?q=alert")).messages).toHaveLength(1);
    expect((await json("/api/graph?period=all")).edges).toEqual([{ from: "alice", to: "bob", count: 1 }]);
    expect((await get(app, `/api/thread?id=nope&token=${TOKEN}`)).status).toBe(404);
    expect((await get(app, `/api/graph?period=bogus&token=${TOKEN}`)).status).toBe(400);
    expect((await get(app, `/nothing?token=${TOKEN}`)).status).toBe(404);
  });

  test("a write needs the token in its header (not the URL), JSON, and a name; --read-only refuses every write", async () => {
    await store.writeStatus({ name: "bob", status: "ready", pane: "%2" });
    const app = await web();
    expect((await post(app, "/api/send", { to: "bob", body: "hi" }, {})).status).toBe(403);
    const sent = await post(app, "/api/send", { to: "bob", body: "hi", subject: "Hello", priority: "high" });
    expect(sent.status).toBe(200);
    const { id } = (await sent.json()) as { id: string };
    expect((await store.find("bob", id))!.message).toMatchObject({ from: "ana", message: "hi", subject: "Hello", priority: "high" });
    const bad = await post(app, "/api/send", { to: "nobody", body: "hi" });
    expect(bad.status).toBe(400);
    expect(((await bad.json()) as { error: { code: string } }).error.code).toBe("unknown_recipient");
    expect((await post(app, "/api/send", { to: "bob" })).status).toBe(400);
    expect((await post(app, "/api/nothing", {})).status).toBe(404);
    const form = await app.handle(
      new Request(`http://127.0.0.1:4321/api/send`, {
        method: "POST",
        headers: { host: "127.0.0.1:4321", "content-type": "application/x-www-form-urlencoded", "x-agentmail-token": TOKEN },
        body: "to=bob&body=hi",
      }),
    );
    expect(form.status).toBe(415);
    const readOnly = await web({ readOnly: true });
    const refused = await post(readOnly, "/api/send", { to: "bob", body: "hi" });
    expect(refused.status).toBe(403);
    expect(((await refused.json()) as { error: { code: string } }).error.code).toBe("read_only");
    const nameless = await post(await web({ human: null }), "/api/send", { to: "bob", body: "hi" });
    expect(((await nameless.json()) as { error: { message: string } }).error.message).toContain("AGENTMAIL_HUMAN");
  });

  test("the observer's token reads and is refused on every write; /api/check resolves a To; a live claim is not the person's to release", async () => {
    await store.writeStatus({ name: "bob", status: "ready", pane: "%2" });
    const app = new WebApp(await open(), {
      invocation: invocation(),
      human: "ana",
      readOnly: false,
      token: TOKEN,
      observerToken: "watcher",
    });
    app.port = 4321;
    const room = (await (await get(app, "/api/room?token=watcher")).json()) as { readOnly: boolean; observer: boolean };
    expect(room).toMatchObject({ readOnly: true, observer: true });
    for (const path of ["/api/send", "/api/check", "/api/reply", "/api/ack", "/api/archive", "/api/release"]) {
      const refused = await post(app, path, { to: "bob", body: "x", id: "x", mailbox: "ana" }, { "x-agentmail-token": "watcher" });
      expect([path, refused.status, ((await refused.json()) as { error: { code: string } }).error.code]).toEqual([path, 403, "observer"]);
    }
    expect(await (await post(app, "/api/check", { to: "bob" })).json()).toEqual({ to: ["bob"], warnings: [] });
    const unknown = await post(app, "/api/check", { to: "bobb" });
    expect(unknown.status).toBe(400);
    // What to do next in the room's terms (mail/next-steps.ts), not the CLI's ('run agentmail recipients').
    expect(((await unknown.json()) as { error: { message: string } }).error.message).toBe(
      `no window named "bobb" in this tmux session; did you mean "bob"? pick a name from the room's agent list, or write name@project for another project's agent`,
    );
    expect((await post(app, "/api/release", { id: "nosuch" })).status).toBe(404);
    // Through a tunnel the host names the loopback with another port: served; any other host is not.
    expect((await get(app, `/?token=${TOKEN}`, { host: "localhost:9999" })).status).toBe(200);
    expect((await get(app, `/?token=${TOKEN}`, { host: "example.com:4321" })).status).toBe(421);
  });

  test("reply, acknowledge and archive act as the person, on their own mail", async () => {
    const question = await send(createMessage("bob", "ana", "merge?"));
    const other = await send(createMessage("bob", "ana", "fyi"));
    const app = await web();
    const reply = await post(app, "/api/reply", { id: question.id, mailbox: "ana", body: "yes" });
    expect(reply.status).toBe(200);
    expect(await reply.json()).toMatchObject({ to: "bob" });
    expect(await (await post(app, "/api/ack", { id: other.id })).json()).toEqual({ id: other.id, acknowledged: true });
    expect(await (await post(app, "/api/archive", { id: other.id })).json()).toEqual({ id: other.id, archived: true });
    expect((await store.find("ana", other.id))!.archived).toBe(true);
    expect((await post(app, "/api/reply", { id: "nosuchid", mailbox: "ana", body: "x" })).status).toBe(404);
  });

  test("the event stream sends the room's changes as they come, new mail as a row without its body", async () => {
    const app = await web();
    const response = await get(app, `/events?token=${TOKEN}`);
    expect(response.headers.get("content-type")).toContain("text/event-stream");
    const reader = response.body!.getReader();
    const decoder = new TextDecoder();
    let received = decoder.decode((await reader.read()).value);
    expect(received).toContain(": live");
    let stop = () => {};
    const stopped = new Promise<void>((resolve) => {
      stop = resolve;
    });
    const following = app.follow(stopped);
    const message = await send(createMessage("alice", "bob", "secret body", new Date(), { subject: "Subject line" }));
    while (!received.includes("event: mail")) received += decoder.decode((await reader.read()).value);
    stop();
    await following;
    const data = JSON.parse(received.split("event: mail\ndata: ")[1]!.split("\n")[0]!);
    expect(data).toMatchObject({ id: message.id, mailbox: "bob", preview: "Subject line" });
    expect(received).not.toContain("secret body");
    app.close();
  });
});

describe("the commands", () => {
  test("watch --once prints the room; --json as one document; a bad --limit, a bad name, or no terminal is refused with the fix", async () => {
    await send(createMessage("alice", "bob", "hello"));
    const env = { AGENTMAIL_HUMAN: "ana" };
    const once = await runInProcess(["watch", "--once"], { cwd: repo.dir, env });
    expect(once.code).toBe(0);
    expect(once.stdout).toMatch(/^agentmail watch · as ana · 3 agents · 1 copies · no mailman · file /);
    expect(once.stdout).toContain("hello");
    const json = await runInProcess(["watch", "--once", "--json", "--limit", "5"], { cwd: repo.dir, env });
    expect(JSON.parse(json.stdout).feed[0]).toMatchObject({ from: "alice", body: "hello" });
    expect((await runInProcess(["watch", "--once", "--limit", "0"], { cwd: repo.dir, env })).stderr).toContain(
      "--limit takes a whole number",
    );
    expect((await runInProcess(["watch", "--once", "--as", "a,b"], { cwd: repo.dir })).stderr).toContain("--as: ");
    expect((await runInProcess(["watch"], { cwd: repo.dir, env })).stderr).toContain("use --once or --json");
    expect((await runInProcess(["web", "--port", "http"], { cwd: repo.dir, env })).stderr).toContain("--port takes a port number");
  });

  test("the web server listens on 127.0.0.1 only, on a free port, and answers there; a port in use is refused with the fix", async () => {
    const app = new WebApp(await open(), { invocation: invocation(), human: "ana", readOnly: false, token: "t" });
    const server = app.listen(0);
    try {
      expect(app.port).toBe(server.port);
      const response = await fetch(`http://127.0.0.1:${server.port}/?token=t`);
      expect(response.status).toBe(200);
      const taken = new WebApp(await open(), { invocation: invocation(), human: "ana", readOnly: false, token: "t" });
      expect(() => taken.listen(server.port)).toThrow(/cannot listen on 127\.0\.0\.1:\d+ \(EADDRINUSE\); pick another with --port/);
    } finally {
      server.stop();
    }
  });
});
