/**
 * A mock model server for the agent CLIs: Claude Code (Anthropic Messages), Codex CLI (OpenAI Responses) and Gemini
 * CLI (Gemini generateContent) point their base URL at it. It listens on 127.0.0.1 on a free port, records every
 * request, and answers each conversation request with the next reply a test scripted: text, or a call of one of the
 * tools the agent offered (then, when the agent sends the tool's result, the next reply).
 *
 * Requests that are not the conversation (Gemini's model router, a token count, a probe) get a fitting canned answer
 * and never take a scripted reply, so a test scripts only the turns it cares about.
 */
import { anthropicReply, isAnthropicConversation, anthropicToolNames } from "./anthropic.ts";
import { geminiReply, geminiSideAnswer, geminiToolNames } from "./gemini.ts";
import { openaiReply, openaiToolNames } from "./openai.ts";

export type Api = "anthropic" | "openai" | "gemini";

/** One call of a tool: the tool whose name ends with `tool` (the CLIs prefix MCP tools), with this input. */
export interface ToolCall {
  tool: string;
  input: Record<string, unknown>;
  /** Called by this exact name though the agent did not list it: a deferred tool (Claude Code's SendMessage) it runs. */
  unlisted?: true;
}

/**
 * What the model answers: text, or a call of a tool; `also` adds more calls to the same turn (Claude Code runs them
 * all; the Anthropic API only).
 */
export type Reply = { text: string } | (ToolCall & { text?: string; also?: ToolCall[] });

/** One conversation request as a script sees it. */
export interface Turn {
  api: Api;
  /** 0 for the first conversation request of this server, counting every API. */
  index: number;
  body: any;
  /** The body as JSON text, for "does the model see X" checks. */
  text: string;
  /** The names of the tools the agent offered the model. */
  tools: string[];
}

export type Script = Reply | ((turn: Turn) => Reply | Promise<Reply>);

export interface Recorded {
  method: string;
  path: string;
  query: string;
  headers: Record<string, string>;
  body: any;
  /** Set for conversation requests: which scripted turn this was. */
  turn?: number;
  /** The reply the mock sent (conversation requests only). */
  reply?: Reply;
  /** The tool name a tool-call reply resolved to. */
  toolName?: string;
  /** Answered by a diversion (see divert), not by the script. */
  diverted?: boolean;
  /** Set when the mock could not answer (an unknown tool, a script that threw): the test should fail with it. */
  error?: string;
  /** When the request arrived (ms since the epoch): latencies are measured to it. */
  at: number;
}

const DEFAULT_REPLY: Reply = { text: "Done." };

/** The tool an agent offers whose name ends with `wanted` after a separator (`mcp__agentmail__send` for `send`). */
export function resolveTool(tools: string[], wanted: string): string {
  const exact = tools.find((name) => name === wanted);
  const matching = tools.filter(
    (name) => name.endsWith(wanted) && /[_.\-:]$/.test(name.slice(0, -wanted.length)) && /agentmail/i.test(name),
  );
  const found = exact ?? (matching.length === 1 ? matching[0] : undefined);
  if (!found) throw new Error(`the agent offered no single tool named like '${wanted}'; it offered: ${tools.join(", ") || "none"}`);
  return found;
}

export class MockModel {
  readonly requests: Recorded[] = [];
  private readonly queue: Script[] = [];
  private readonly diversions: Array<{ when: (turn: Turn) => boolean; answer: Script }> = [];
  private fallback: Script = DEFAULT_REPLY;
  private turns = 0;
  private server: ReturnType<typeof Bun.serve>;
  private counter = 0;

  constructor() {
    this.server = Bun.serve({ hostname: "127.0.0.1", port: 0, idleTimeout: 0, fetch: (request) => this.handle(request) });
  }

  get port(): number {
    return this.server.port!;
  }

  /** http://127.0.0.1:PORT, no trailing slash. */
  get url(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  /** Adds replies for the next conversation requests, in order; when they run out, the model says "Done.". */
  script(...replies: Script[]): this {
    this.queue.push(...replies);
    return this;
  }

  /**
   * Answers the conversation requests `when` picks with `answer`, leaving the script to the others: an agent team's
   * teammates share the lead's mock, and must not use up the lead's scripted replies.
   */
  divert(when: (turn: Turn) => boolean, answer: Script): this {
    this.diversions.push({ when, answer });
    return this;
  }

  /** What answers once the script has run out (by default the model says "Done."): a responder for a long session. */
  otherwise(answer: Script): this {
    this.fallback = answer;
    return this;
  }

  /** The conversation requests, in order. */
  get conversation(): Recorded[] {
    return this.requests.filter((request) => request.turn !== undefined);
  }

  /** What went wrong while answering, if anything (a test asserts this is empty). */
  get errors(): string[] {
    return this.requests.flatMap((request) => (request.error ? [`${request.method} ${request.path}: ${request.error}`] : []));
  }

  /** Forgets the requests and the script, for the next test on the same server. */
  reset(): void {
    this.requests.length = 0;
    this.queue.length = 0;
    this.diversions.length = 0;
    this.fallback = DEFAULT_REPLY;
    this.turns = 0;
  }

  stop(): void {
    this.server.stop(true);
  }

  nextId(prefix: string): string {
    this.counter += 1;
    return `${prefix}_mock${this.counter}`;
  }

  private async handle(request: Request): Promise<Response> {
    const url = new URL(request.url);
    const raw = request.method === "GET" || request.method === "HEAD" ? "" : await request.text();
    let body: any = raw;
    try {
      body = raw === "" ? null : JSON.parse(raw);
    } catch {
      // Not JSON: keep the text.
    }
    const headers: Record<string, string> = {};
    request.headers.forEach((value, key) => {
      headers[key] = value;
    });
    const recorded: Recorded = { method: request.method, path: url.pathname, query: url.search, headers, body, at: Date.now() };
    this.requests.push(recorded);
    try {
      return await this.answer(recorded);
    } catch (error) {
      recorded.error = error instanceof Error ? error.message : String(error);
      return Response.json({ error: { type: "mock_error", message: recorded.error } }, { status: 500 });
    }
  }

  private async answer(recorded: Recorded): Promise<Response> {
    const { method, path, body } = recorded;
    if (method === "HEAD" || (method === "GET" && path === "/")) return new Response("", { status: 200 });
    if (method === "POST" && path === "/v1/messages") {
      if (!isAnthropicConversation(body)) return anthropicReply(this, body, DEFAULT_REPLY, undefined);
      return this.converse(recorded, "anthropic", anthropicToolNames(body), (reply, tool, more) =>
        anthropicReply(this, body, reply, tool, more),
      );
    }
    if (method === "POST" && path === "/v1/messages/count_tokens") return Response.json({ input_tokens: 100 });
    if (method === "POST" && path === "/v1/responses") {
      return this.converse(recorded, "openai", openaiToolNames(body), (reply, tool) => openaiReply(this, body, reply, tool));
    }
    if (method === "GET" && path === "/v1/models") return Response.json({ object: "list", data: [], models: [] });
    const gemini = /^\/v1(?:beta|alpha)?\/models\/([^/:]+):(\w+)$/.exec(path);
    if (method === "POST" && gemini) {
      const action = gemini[2]!;
      if (action === "streamGenerateContent") {
        return this.converse(recorded, "gemini", geminiToolNames(body), (reply, tool) => geminiReply(body, reply, tool));
      }
      return geminiSideAnswer(action, body);
    }
    return Response.json({ error: { type: "not_found", message: `the mock model does not serve ${method} ${path}` } }, { status: 404 });
  }

  private async converse(
    recorded: Recorded,
    api: Api,
    tools: string[],
    encode: (reply: Reply, tool: string | undefined, more: string[]) => Response,
  ): Promise<Response> {
    const index = this.turns++;
    recorded.turn = index;
    const turn: Turn = { api, index, body: recorded.body, text: JSON.stringify(recorded.body), tools };
    const diversion = this.diversions.find((candidate) => candidate.when(turn));
    if (diversion) recorded.diverted = true;
    const next = diversion ? diversion.answer : (this.queue.shift() ?? this.fallback);
    const reply = typeof next === "function" ? await next(turn) : next;
    recorded.reply = reply;
    let tool: string | undefined;
    const more: string[] = [];
    if ("tool" in reply) {
      const named = (call: ToolCall) => (call.unlisted ? call.tool : resolveTool(tools, call.tool));
      tool = named(reply);
      recorded.toolName = tool;
      for (const call of reply.also ?? []) more.push(named(call));
      if (more.length > 0 && api !== "anthropic") throw new Error(`the ${api} mock answers with one tool call at a time`);
    }
    return encode(reply, tool, more);
  }
}

/** Server-sent events: `event:` lines when named, one `data:` line of JSON each. */
export function sse(events: Array<{ event?: string; data: unknown }>): Response {
  const text = events.map(({ event, data }) => `${event ? `event: ${event}\n` : ""}data: ${JSON.stringify(data)}\n\n`).join("");
  return new Response(text, { headers: { "content-type": "text/event-stream", "cache-control": "no-cache" } });
}
