/**
 * The MCP stdio transport: one JSON-RPC message per line on stdin, one per line on stdout. It lives here because this
 * directory owns stdout, and stdout must carry the protocol and nothing else.
 *
 * Not the SDK's StdioServerTransport: that one reports a line that is not JSON-RPC to the server's error handler and
 * answers nothing, so the client waits forever. Here such a line gets a JSON-RPC error reply (parse error or invalid
 * request) and the next line is served as usual. The server ends when stdin closes.
 */
import type { Readable } from "node:stream";
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import { ClientRequestSchema, JSONRPCMessageSchema, type JSONRPCMessage, type JSONRPCRequest } from "@modelcontextprotocol/sdk/types.js";
import { MAX_MESSAGE_BYTES } from "../mail/message.ts";
import { writeStdout } from "../output/streams.ts";
import { describeIssue } from "./argument-errors.ts";
import { idOfCutLine, type RequestId } from "./line-id.ts";

/** JSON-RPC 2.0's own codes for a line that is not JSON, for JSON that is not a request, and for bad params. */
export const PARSE_ERROR = -32700;
export const INVALID_REQUEST = -32600;
const INVALID_PARAMS = -32602;

/** The SDK's own schema for each request a client may send, by method. */
const REQUEST_SCHEMAS = new Map(ClientRequestSchema.options.map((schema) => [schema.shape.method.value as string, schema]));

/**
 * What is wrong with a request's params, checked with the very schema the SDK parses it with. Left to the SDK, a
 * request that fails it (tools/call whose `arguments` is a string) is answered -32603 with the validation dump.
 * Methods the SDK does not know are left to it (-32601).
 */
function paramsProblem(request: JSONRPCRequest): string | null {
  const schema = REQUEST_SCHEMAS.get(request.method);
  const parsed = schema?.safeParse(request);
  return parsed && !parsed.success ? describeIssue(parsed.error.issues[0]!, request) : null;
}

/** How long requests already received may still be answered after stdin ends. */
const END_GRACE_MS = 2_000;
/**
 * The longest line taken: far above the largest message a send may carry (256 KiB, at most 6 bytes per character
 * once escaped as JSON), small enough that a client writing garbage without newlines cannot exhaust memory.
 */
export const MAX_LINE_BYTES = 8 * 1024 * 1024;
/** How much of a discarded line's start and of its end is kept to find its request id (see line-id.ts). */
const ID_SEARCH_BYTES = 4096;

/** The answer to a line over MAX_LINE_BYTES: the limit, and how to stay under it in MCP terms. */
export const LINE_TOO_LONG =
  `Invalid Request: the line was longer than ${MAX_LINE_BYTES / 1024 / 1024} MiB (${MAX_LINE_BYTES} bytes), the most ` +
  `agentmail mcp reads, and was discarded unread; send a shorter request: the message argument of send and reply ` +
  `takes at most ${MAX_MESSAGE_BYTES.toLocaleString("en")} bytes, so for more, write the text to a file and send its path`;

const NEWLINE = 0x0a;

/** What the transport reads: process.stdin, or any readable stream in tests. */
export type LineInput = Pick<Readable, "on" | "off" | "pause">;

/** The request id of a line that is JSON but not a valid message, when it has a usable one: the reply names it. */
function idOf(value: unknown): RequestId {
  if (typeof value !== "object" || value === null) return null;
  const id = (value as { id?: unknown }).id;
  return typeof id === "string" || typeof id === "number" ? id : null;
}

/** The last ID_SEARCH_BYTES of the pieces, in order. */
function lastBytes(pieces: readonly Buffer[]): Buffer {
  const kept: Buffer[] = [];
  let length = 0;
  for (let i = pieces.length - 1; i >= 0 && length < ID_SEARCH_BYTES; i--) {
    const piece = pieces[i]!;
    const part = piece.subarray(Math.max(0, piece.length - (ID_SEARCH_BYTES - length)));
    kept.unshift(part);
    length += part.length;
  }
  // A copy: the chunk it comes from is not kept alive, nor changed under it.
  return Buffer.concat(kept);
}

export class LineTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage) => void;

  private pending: Buffer[] = [];
  private pendingBytes = 0;
  /** Set while the rest of an over-long line is being thrown away. */
  private discarding = false;
  /** The first and the last ID_SEARCH_BYTES of the line being thrown away, to answer it with its id. */
  private discardedHead: Buffer = Buffer.alloc(0);
  private discardedTail: Buffer = Buffer.alloc(0);
  private closed = false;
  /** Requests received and not answered yet: stdin ending does not cut them off (up to END_GRACE_MS). */
  private readonly inFlight = new Set<string | number>();
  private ending = false;

  constructor(
    private readonly input: LineInput,
    private readonly write: (text: string) => void = writeStdout,
  ) {}

  async start(): Promise<void> {
    this.input.on("data", this.onData);
    this.input.on("end", this.onEnd);
    this.input.on("close", this.onEnd);
    this.input.on("error", this.onInputError);
  }

  async send(message: JSONRPCMessage): Promise<void> {
    if (this.closed) return;
    try {
      this.write(JSON.stringify(message) + "\n");
    } catch (error) {
      // The client is gone (stdout closed): nothing more can be answered, so stop serving.
      await this.close();
      throw error;
    }
    if ("id" in message && ("result" in message || "error" in message)) {
      this.inFlight.delete(message.id as string | number);
      if (this.ending && this.inFlight.size === 0) await this.close();
    }
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.input.off("data", this.onData);
    this.input.off("end", this.onEnd);
    this.input.off("close", this.onEnd);
    this.input.off("error", this.onInputError);
    this.input.pause();
    this.pending = [];
    this.onclose?.();
  }

  private readonly onData = (chunk: Buffer | string): void => {
    let bytes = typeof chunk === "string" ? Buffer.from(chunk, "utf8") : chunk;
    for (let newline = bytes.indexOf(NEWLINE); newline !== -1 && !this.closed; newline = bytes.indexOf(NEWLINE)) {
      this.take(bytes.subarray(0, newline));
      this.endLine();
      bytes = bytes.subarray(newline + 1);
    }
    if (!this.closed) this.take(bytes);
  };

  private readonly onEnd = (): void => {
    if (this.ending) return;
    // A last line without a newline still counts: a client may close right after writing it.
    if (this.pendingBytes > 0 || this.discarding) this.endLine();
    this.ending = true;
    // Requests written before stdin closed (`printf … | agentmail mcp`) are still answered; a long wait is cut
    // short after the grace period, when closing aborts it.
    if (this.inFlight.size === 0) void this.close();
    else setTimeout(() => void this.close(), END_GRACE_MS).unref();
  };

  private readonly onInputError = (error: Error): void => {
    this.onerror?.(error);
    void this.close();
  };

  private take(bytes: Buffer): void {
    if (bytes.length === 0) return;
    if (this.discarding) {
      this.discardedTail = lastBytes([this.discardedTail, bytes]);
      return;
    }
    if (this.pendingBytes + bytes.length > MAX_LINE_BYTES) {
      const pieces = [...this.pending, bytes];
      this.discardedHead = Buffer.concat(pieces, Math.min(ID_SEARCH_BYTES, this.pendingBytes + bytes.length));
      this.discardedTail = lastBytes(pieces);
      this.discarding = true;
      this.pending = [];
      this.pendingBytes = 0;
      return;
    }
    this.pending.push(bytes);
    this.pendingBytes += bytes.length;
  }

  private endLine(): void {
    const tooLong = this.discarding;
    const line = Buffer.concat(this.pending).toString("utf8").replace(/\r$/, "");
    this.pending = [];
    this.pendingBytes = 0;
    this.discarding = false;
    if (tooLong) {
      const id = idOfCutLine(this.discardedHead.toString("utf8"), this.discardedTail.toString("utf8"));
      this.discardedHead = this.discardedTail = Buffer.alloc(0);
      this.reject(id, INVALID_REQUEST, LINE_TOO_LONG);
    } else if (line.trim() !== "") this.deliver(line);
  }

  private deliver(line: string): void {
    let value: unknown;
    try {
      value = JSON.parse(line);
    } catch (error) {
      this.reject(null, PARSE_ERROR, `Parse error: ${(error as Error).message}; send one JSON-RPC message per line`);
      return;
    }
    const parsed = JSONRPCMessageSchema.safeParse(value);
    if (!parsed.success) {
      this.reject(idOf(value), INVALID_REQUEST, "Invalid Request: not a JSON-RPC 2.0 request, notification or response");
      return;
    }
    const message = parsed.data;
    if ("method" in message && "id" in message) {
      const problem = paramsProblem(message);
      if (problem) {
        this.reject(message.id, INVALID_PARAMS, `Invalid params for ${message.method}: ${problem}`);
        return;
      }
      this.inFlight.add(message.id);
    }
    this.onmessage?.(message);
  }

  private reject(id: RequestId, code: number, message: string): void {
    this.onerror?.(new Error(message));
    this.send({ jsonrpc: "2.0", id, error: { code, message } } as unknown as JSONRPCMessage).catch(() => {});
  }
}
