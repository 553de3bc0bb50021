/**
 * `agentmail web`: the mail room as a local page. One handler for every request (web-standard Request and
 * Response, so it runs under any server; listen.ts binds it to 127.0.0.1):
 *
 *   GET  /?token=T                    the page's shell (page.ts); /app.js and /app.css the script and style
 *   GET  /api/room|mailbox|thread|sent|search|graph?token=T    the room's data as JSON
 *   GET  /events?token=T              the room's events, live (server-sent events)
 *   POST /api/send|check|reply|ack|archive|release   writes (and a check of a To), as the person; the token in the
 *                                     X-Agentmail-Token header
 *
 * Every request needs a token (fresh random ones per run): the person's, or the observer's (`--observer`), which
 * reads everything and writes nothing. A write needs the person's token in a header, which a link or a form on
 * another site cannot send, and is refused when --read-only. Requests for another host name than the loopback's
 * (DNS rebinding) or from another origin are refused; any port is fine, so an SSH tunnel's local port works. Every
 * response forbids inline script and framing (Content-Security-Policy), and the page puts no value into HTML (page/).
 */
import { timingSafeEqual } from "node:crypto";
import type { Invocation } from "../identity/invocation.ts";
import { releaseGoneClaim } from "../actions/claims.ts";
import { acknowledge, archiveOwn, checkAsHuman, replyAddressee, replyAsHuman, requireHuman, sendAsHuman } from "../actions/human.ts";
import { AgentmailError, toAgentmailError } from "../mail/errors.ts";
import type { RoomEvent } from "../room/model.ts";
import { rowOf, type Room } from "../room/room.ts";
import { listen, type Listening } from "./listen.ts";
import { pageScript } from "./bundle-page.ts";
import { shellHtml, STYLE } from "./page.ts";

/** Largest write request: the largest message (256 KiB) and its fields, as JSON. */
const MAX_BODY_BYTES = 1024 * 1024;
const FEED_ROWS = 200;
const LIST_LIMIT = 500;
/** Comments that keep an idle event stream open through the server's idle timeout. */
const HEARTBEAT_MS = 15_000;
/** How long the room waits for a change before it looks anyway (a read on Redis rings nothing). */
const LOOK_MS = 1_000;

const CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
  "require-trusted-types-for 'script'",
  "trusted-types 'none'",
].join("; ");

const SECURITY_HEADERS: Record<string, string> = {
  "content-security-policy": CSP,
  "x-content-type-options": "nosniff",
  "referrer-policy": "no-referrer",
  "x-frame-options": "DENY",
  "cross-origin-opener-policy": "same-origin",
  "cross-origin-resource-policy": "same-origin",
  "cache-control": "no-store",
};

const PERIODS: Record<string, number | null> = { "1h": 3_600_000, "24h": 86_400_000, "7d": 604_800_000, "30d": 2_592_000_000, all: null };

export interface WebOptions {
  invocation: Invocation;
  human: string | null;
  readOnly: boolean;
  /** The person's token: it reads and writes. */
  token: string;
  /** The observer's token (`--observer`): it reads and never writes; null when none was asked for. */
  observerToken?: string | null;
}

/** Who a request's token says it comes from. */
type Role = "person" | "observer";

/** Host names that reach this server only from this machine (or through a tunnel to it), with any port. */
const LOOPBACK = /^(127\.0\.0\.1|localhost|\[::1\])(:\d{1,5})?$/;

const pause = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

function respond(body: string | ReadableStream<Uint8Array>, status: number, type: string, extra: Record<string, string> = {}): Response {
  return new Response(body, { status, headers: { ...SECURITY_HEADERS, "content-type": type, ...extra } });
}

const json = (value: unknown, status = 200) => respond(JSON.stringify(value), status, "application/json; charset=utf-8");

function failure(status: number, code: string, message: string): Response {
  return json({ error: { code, message } }, status);
}

/** A failure as the page shows it to the person: its next step in the room's terms (mail/next-steps.ts). */
function errorResponse(error: unknown): Response {
  const known = toAgentmailError(error);
  const status = known.code === "not_found" ? 404 : known.code === "internal" ? 500 : 400;
  return failure(status, known.code, known.wordedFor("room"));
}

/** Equal tokens, compared in constant time. */
function sameToken(given: string | null, token: string): boolean {
  if (given === null) return false;
  const a = new TextEncoder().encode(given);
  const b = new TextEncoder().encode(token);
  return a.length === b.length && timingSafeEqual(a, b);
}

interface Client {
  send(text: string): void;
  close(): void;
}

export class WebApp {
  readonly #room: Room;
  readonly #options: WebOptions;
  readonly #clients = new Set<Client>();
  readonly #encoder = new TextEncoder();
  /** The port the server listens on: requests must name 127.0.0.1 or localhost with it. */
  port = 0;

  constructor(room: Room, options: WebOptions) {
    this.#room = room;
    this.#options = options;
  }

  readonly handle = async (request: Request): Promise<Response> => {
    const url = new URL(request.url);
    const host = request.headers.get("host");
    if (host === null || !LOOPBACK.test(host)) {
      return failure(421, "wrong_host", "this server answers only to 127.0.0.1; open the URL agentmail web printed");
    }
    const origin = request.headers.get("origin");
    if (origin !== null && origin !== `http://${host}`) return failure(403, "forbidden", "requests from other sites are refused");
    if (request.method === "POST") return this.#write(request, url);
    if (request.method !== "GET") return failure(405, "method", "only GET and POST are served");
    const role = this.#roleOf(url.searchParams.get("token"));
    if (role === null) {
      return respond(
        "403 forbidden: this page needs the token in the URL that agentmail web printed; open that URL (a new run prints a new one)\n",
        403,
        "text/plain; charset=utf-8",
      );
    }
    try {
      return await this.#read(url, role);
    } catch (error) {
      return errorResponse(error);
    }
  };

  /** The role a token gives: the person's, the observer's, or none. */
  #roleOf(given: string | null): Role | null {
    if (sameToken(given, this.#options.token)) return "person";
    const observer = this.#options.observerToken;
    return observer && sameToken(given, observer) ? "observer" : null;
  }

  async #read(url: URL, role: Role): Promise<Response> {
    const room = this.#room;
    const param = (name: string) => url.searchParams.get(name) ?? "";
    switch (url.pathname) {
      case "/":
        return respond(shellHtml(url.searchParams.get("token") ?? ""), 200, "text/html; charset=utf-8");
      case "/app.js":
        return respond(await pageScript(), 200, "text/javascript; charset=utf-8");
      case "/app.css":
        return respond(STYLE, 200, "text/css; charset=utf-8");
      case "/events":
        return this.#events();
      case "/api/room":
        return json({
          store: room.store.description,
          human: this.#options.human,
          readOnly: this.#options.readOnly || role === "observer",
          observer: role === "observer",
          copies: room.size,
          agents: room.agents(),
          feed: room.latest(FEED_ROWS).map(rowOf),
          needs: room.needs(),
          claims: room.claims(),
          mailman: room.mailman(),
          thresholds: room.thresholds,
        });
      case "/api/mailbox":
        return json({ name: param("name"), items: room.mailbox(param("name")).slice(0, LIST_LIMIT).map(rowOf) });
      case "/api/thread": {
        const messages = room.thread(param("id"));
        if (!messages) throw new AgentmailError("not_found", `no message ${param("id")} in the mail store`);
        return json({ messages });
      }
      case "/api/sent":
        return json({ name: param("name"), messages: room.sent(param("name")).slice(0, LIST_LIMIT) });
      case "/api/search":
        return json({ q: param("q"), messages: param("q") === "" ? [] : room.search(param("q"), LIST_LIMIT) });
      case "/api/graph": {
        const span = PERIODS[param("period") || "24h"];
        if (span === undefined) throw new AgentmailError("usage", `unknown period; use one of ${Object.keys(PERIODS).join(", ")}`);
        return json(room.graph(span === null ? null : new Date(Date.now() - span)));
      }
      default:
        return failure(404, "not_found", "no such page");
    }
  }

  /** A live stream of the room's events; it ends when the page goes away. */
  #events(): Response {
    let client: Client | null = null;
    let heartbeat: ReturnType<typeof setInterval> | undefined;
    const clients = this.#clients;
    const encoder = this.#encoder;
    const stream = new ReadableStream<Uint8Array>({
      start(controller) {
        const current: Client = {
          send(text) {
            try {
              controller.enqueue(encoder.encode(text));
            } catch {
              current.close();
            }
          },
          close() {
            clients.delete(current);
            clearInterval(heartbeat);
            try {
              controller.close();
            } catch {
              // Closed by the page already.
            }
          },
        };
        client = current;
        clients.add(current);
        current.send("retry: 2000\n: live\n\n");
        heartbeat = setInterval(() => current.send(": still here\n\n"), HEARTBEAT_MS);
      },
      cancel() {
        client?.close();
      },
    });
    return respond(stream, 200, "text/event-stream; charset=utf-8");
  }

  /** Sends the room's events to every open page: new mail as list rows (bodies stay on the server until asked). */
  broadcast(events: RoomEvent[]): void {
    if (this.#clients.size === 0) return;
    let text = "";
    for (const event of events) {
      const data = event.event === "mail" ? rowOf(event.item) : event;
      text += `event: ${event.event}\ndata: ${JSON.stringify(data)}\n\n`;
    }
    for (const client of [...this.#clients]) client.send(text);
  }

  /** Serves this handler on 127.0.0.1 (port 0: a free one). */
  listen(port: number): Listening {
    const listening = listen(port, this.handle);
    this.port = listening.port;
    return listening;
  }

  /** Ends every open event stream. */
  close(): void {
    for (const client of [...this.#clients]) client.close();
  }

  /**
   * Follows the store until `stop` resolves, sending each change to the open pages. A look that fails (the Redis
   * server away) is reported through `onError` when its reason changes, and the next look tries again.
   */
  async follow(stop: Promise<void>, onError: (message: string) => void = () => {}): Promise<void> {
    let stopped = false;
    void stop.then(() => {
      stopped = true;
    });
    let failing: string | null = null;
    while (!stopped) {
      await Promise.race([this.#room.wait(LOOK_MS).catch(() => pause(LOOK_MS)), stop]);
      if (stopped) break;
      try {
        const events = await this.#room.step();
        if (failing !== null) onError("the mail store answers again");
        failing = null;
        if (events.length > 0) this.broadcast(events);
      } catch (error) {
        const message = `cannot read the mail store: ${(error as Error).message}`;
        if (message !== failing) onError(message);
        failing = message;
      }
    }
  }

  async #write(request: Request, url: URL): Promise<Response> {
    const role = this.#roleOf(request.headers.get("x-agentmail-token"));
    if (role === "observer") {
      return failure(403, "observer", "this is an observer's link: it shows the room and writes nothing; write from the person's URL");
    }
    if (role === null) return failure(403, "forbidden", "a write needs the page's token in the X-Agentmail-Token header");
    if (this.#options.readOnly) {
      return failure(403, "read_only", "this page is read-only (agentmail web --read-only); start agentmail web without it to write");
    }
    const type = request.headers.get("content-type") ?? "";
    if (!type.startsWith("application/json")) return failure(415, "usage", "send the request as application/json");
    const raw = await request.text();
    if (new TextEncoder().encode(raw).length > MAX_BODY_BYTES) return failure(413, "message_too_large", "the request is too large");
    let input: Record<string, unknown>;
    try {
      const parsed = JSON.parse(raw) as unknown;
      if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) throw new Error("not an object");
      input = parsed as Record<string, unknown>;
    } catch {
      return failure(400, "usage", "the request is not a JSON object");
    }
    try {
      return json(await this.#act(url.pathname, input));
    } catch (error) {
      return errorResponse(error);
    }
  }

  async #act(path: string, input: Record<string, unknown>): Promise<unknown> {
    const text = (name: string, required = true): string | undefined => {
      const value = input[name];
      if (value === undefined || value === null || value === "") {
        if (required) throw new AgentmailError("usage", `${name} is missing`);
        return undefined;
      }
      if (typeof value !== "string") throw new AgentmailError("usage", `${name} must be text`);
      return value;
    };
    const { invocation } = this.#options;
    const human = requireHuman(this.#options.human);
    const store = this.#room.store;
    switch (path) {
      case "/api/send": {
        const warnings: string[] = [];
        const fields = { subject: text("subject", false), type: text("type", false), priority: text("priority", false) };
        const sent = await sendAsHuman(invocation, human, text("to")!, text("body")!, fields, (warning) => warnings.push(warning));
        return { id: sent.id, warnings };
      }
      case "/api/check":
        return await checkAsHuman(invocation, human, text("to")!);
      case "/api/reply": {
        const mailbox = text("mailbox")!;
        const found = await this.#room.find(mailbox, text("id")!);
        if (!found) throw new AgentmailError("not_found", `no message ${text("id")} in the mailbox of ${mailbox}`);
        const sent = await replyAsHuman(invocation, human, found, text("body")!);
        return { id: sent.id, to: replyAddressee(found, human) };
      }
      case "/api/release": {
        const id = text("id")!;
        const claim = this.#room.claims().find((each) => each.id === id);
        const { released, warnings } = await releaseGoneClaim(claim ? this.#room.locate(claim.holder).store : store, human, id);
        this.#room.refreshFacts();
        return { id: released.id, path: released.path, holder: released.holder, released: true, warnings };
      }
      case "/api/ack": {
        const id = text("id")!;
        await acknowledge(store, human, id);
        return { id, acknowledged: true };
      }
      case "/api/archive": {
        const id = text("id")!;
        await archiveOwn(store, human, id);
        return { id, archived: true };
      }
      default:
        throw new AgentmailError("not_found", "no such action");
    }
  }
}
