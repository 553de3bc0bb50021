/**
 * The page's requests (src/web/page/api.ts) in process: the browser's fetch and EventSource are stood in for by ones
 * that hand each request, as the browser would send it from the page's origin, to the real web server's handler
 * (src/web/server.ts). So what is checked is the contract the page and the server share: a read is let in by the
 * token in its URL, a write by the token in its header (never in its URL), and a refusal reaches the page as the
 * server's words. The page in a real browser is test/commands/web.test.ts.
 */
import { afterEach, beforeEach, describe, expect, test } from "bun:test";
import { createMessage } from "../../../../src/mail/message.ts";
import { Api } from "../../../../src/web/page/api.ts";
import { WebApp } from "../../../../src/web/server.ts";
import type { Room } from "../../../../src/room/room.ts";
import { roomFacts, roomsInProcess } from "../../../support/room-world.ts";

const TOKEN = "t0ken-of-this-run";
const ORIGIN = "http://127.0.0.1:4321";

const world = roomsInProcess();

/** The requests the page made, as the server got them. */
let sent: Request[];
let app: WebApp;
let room: Room;
const realFetch = globalThis.fetch;
const realEventSource = (globalThis as { EventSource?: unknown }).EventSource;

/** A stand-in for the browser's EventSource: remembers the URL the page opened, relative to the page. */
class RecordedEventSource {
  static opened: string[] = [];
  constructor(readonly url: string) {
    RecordedEventSource.opened.push(url);
  }
}

beforeEach(async () => {
  sent = [];
  RecordedEventSource.opened = [];
  room = await world.open({ human: "ana", host: "here", facts: roomFacts() });
  app = new WebApp(room, {
    invocation: { cwd: world.repo.dir, env: { HOME: world.repo.dir, PATH: process.env.PATH } },
    human: "ana",
    readOnly: false,
    token: TOKEN,
  });
  app.port = 4321;
  // The browser resolves the page's paths against its origin and adds the headers it always sends.
  globalThis.fetch = (async (input: string | URL | Request, init?: RequestInit) => {
    const headers = new Headers(init?.headers);
    headers.set("host", "127.0.0.1:4321");
    if (init?.method === "POST") headers.set("origin", ORIGIN);
    const request = new Request(new URL(String(input), ORIGIN), { ...init, headers });
    sent.push(request.clone());
    return app.handle(request);
  }) as typeof fetch;
  (globalThis as { EventSource?: unknown }).EventSource = RecordedEventSource;
});
afterEach(() => {
  globalThis.fetch = realFetch;
  (globalThis as { EventSource?: unknown }).EventSource = realEventSource;
});

describe("the page's reads", () => {
  test("carry the token in the URL beside their parameters, and return the server's JSON", async () => {
    await world.store.writeStatus({ name: "bob", status: "ready", pane: "%2" });
    const message = createMessage("bob", "ana", "is the build green?", new Date(), { subject: "Build" });
    await world.store.append(message);
    await room.step();
    const mailbox = await new Api(TOKEN).get<{ name: string; items: { id: string; from: string }[] }>("/api/mailbox", { name: "ana" });
    expect(mailbox.name).toBe("ana");
    expect(mailbox.items.map((item) => [item.id, item.from])).toEqual([[message.id, "bob"]]);
    const url = new URL(sent[0]!.url);
    expect([url.pathname, url.searchParams.get("name"), url.searchParams.get("token")]).toEqual(["/api/mailbox", "ana", TOKEN]);
    expect(sent[0]!.headers.get("accept")).toBe("application/json");
  });

  test("a token the server does not know is refused, with the server's words", async () => {
    await expect(new Api("stale-token").get("/api/room")).rejects.toThrow(
      "403 forbidden: this page needs the token in the URL that agentmail web printed",
    );
  });

  test("the live stream opens at /events with the token, and the server streams to that URL", async () => {
    new Api(TOKEN).events();
    expect(RecordedEventSource.opened).toEqual([`/events?token=${TOKEN}`]);
    const response = await app.handle(
      new Request(new URL(RecordedEventSource.opened[0]!, ORIGIN), { headers: { host: "127.0.0.1:4321" } }),
    );
    expect(response.status).toBe(200);
    expect(response.headers.get("content-type")).toContain("text/event-stream");
    await response.body?.cancel();
  });
});

describe("the page's writes", () => {
  test("carry the token in the header, never in the URL, and the mail is stored as the person's", async () => {
    await world.store.writeStatus({ name: "bob", status: "ready", pane: "%2" });
    const answer = await new Api(TOKEN).post<{ id: string; warnings: string[] }>("/api/send", { to: "bob", body: "yes, ship it" });
    expect(answer.warnings).toEqual([]);
    expect((await world.store.find("bob", answer.id))!.message).toMatchObject({ from: "ana", to: "bob", message: "yes, ship it" });
    expect(sent[0]!.method).toBe("POST");
    expect(new URL(sent[0]!.url).search).toBe("");
    expect(sent[0]!.headers.get("x-agentmail-token")).toBe(TOKEN);
    expect(sent[0]!.headers.get("content-type")).toBe("application/json");
  });

  test("a write the server refuses fails with its message, and nothing is stored", async () => {
    await world.store.writeStatus({ name: "bob", status: "ready", pane: "%2" });
    await expect(new Api(TOKEN).post("/api/send", { to: "nobody", body: "hi" })).rejects.toThrow(/nobody/);
    await expect(new Api("stale-token").post("/api/send", { to: "bob", body: "hi" })).rejects.toThrow(
      "a write needs the page's token in the X-Agentmail-Token header",
    );
    expect(await world.store.unread("bob")).toEqual([]);
  });
});
