/**
 * Codex CLI's app-server control socket, as agentmail uses it (verified on 0.169.0; test/agents/protocol.test.ts
 * fails when a pinned Codex stops answering like this).
 *
 * The interactive `codex` starts (or reuses) one app-server daemon per CODEX_HOME, and the TUI's threads live in it.
 * Its control socket, `$CODEX_HOME/app-server-control/app-server-control.sock`, speaks WebSocket (RFC 6455, text
 * frames) over the unix socket, one JSON-RPC 2.0 message per frame. A connection sends `initialize` (with
 * capabilities.experimentalApi, which `thread/queue/add` needs) and the notification `initialized` first.
 *
 * A minimal client: no dependency for one upgrade and a frame format (client frames masked, server frames not, a ping
 * answered); every call is bounded by a timeout, and a request the server makes of us (an approval) is refused, so
 * the agent is never left waiting on agentmail.
 */
import { randomBytes, randomUUID } from "node:crypto";
import { connect, type Socket } from "node:net";
import { join } from "node:path";

export const controlSocketOf = (codexHome: string) => join(codexHome, "app-server-control", "app-server-control.sock");

/** An error the server answered with (JSON-RPC `error`). */
export class RpcError extends Error {
  constructor(
    readonly method: string,
    readonly code: number,
    message: string,
  ) {
    super(`${method}: ${message} (${code})`);
  }
}

interface Pending {
  method: string;
  resolve: (value: unknown) => void;
  reject: (error: Error) => void;
  timer: ReturnType<typeof setTimeout>;
}

const OPCODE = { continuation: 0x0, text: 0x1, close: 0x8, ping: 0x9, pong: 0xa } as const;

/** A client frame: FIN set, masked, with the length in the form its size needs. */
function clientFrame(opcode: number, payload: Uint8Array): Buffer {
  const mask = randomBytes(4);
  const length = payload.length;
  const header = length < 126 ? Buffer.alloc(2) : length < 65536 ? Buffer.alloc(4) : Buffer.alloc(10);
  header[0] = 0x80 | opcode;
  if (length < 126) header[1] = 0x80 | length;
  else if (length < 65536) {
    header[1] = 0x80 | 126;
    header.writeUInt16BE(length, 2);
  } else {
    header[1] = 0x80 | 127;
    header.writeBigUInt64BE(BigInt(length), 2);
  }
  const body = Buffer.alloc(length);
  for (let i = 0; i < length; i++) body[i] = payload[i]! ^ mask[i % 4]!;
  return Buffer.concat([header, mask, body]);
}

/** One thread as `thread/read` describes it (the fields agentmail reads). */
export interface ThreadInfo {
  id: string;
  cwd: string;
  ephemeral?: boolean;
  status?: { type: string; activeFlags?: string[] };
}

export class CodexControl {
  #buffer = Buffer.alloc(0);
  #fragments: Buffer[] = [];
  #nextId = 1;
  readonly #pending = new Map<number, Pending>();

  private constructor(
    private readonly socket: Socket,
    private readonly timeoutMs: number,
  ) {}

  /** Connects, upgrades to WebSocket and initializes; throws (ENOENT, ECONNREFUSED, a timeout) when it cannot. */
  static async open(socketPath: string, timeoutMs = 3_000): Promise<CodexControl> {
    const socket = connect(socketPath);
    const control = new CodexControl(socket, timeoutMs);
    try {
      await control.#upgrade();
      await control.request("initialize", {
        clientInfo: { name: "agentmail", version: "1" },
        capabilities: { experimentalApi: true, requestAttestation: false },
      });
      control.#send({ jsonrpc: "2.0", method: "initialized" });
      return control;
    } catch (error) {
      control.close();
      throw error;
    }
  }

  #upgrade(): Promise<void> {
    const key = randomBytes(16).toString("base64");
    return new Promise((resolve, reject) => {
      let head = Buffer.alloc(0);
      const timer = setTimeout(() => reject(new Error(`no WebSocket upgrade within ${this.timeoutMs} ms`)), this.timeoutMs);
      const fail = (error: Error) => {
        clearTimeout(timer);
        reject(error);
      };
      const onData = (chunk: Buffer) => {
        head = Buffer.concat([head, chunk]);
        const end = head.indexOf("\r\n\r\n");
        if (end < 0) return;
        this.socket.off("data", onData);
        clearTimeout(timer);
        const status = head.subarray(0, head.indexOf("\r\n")).toString();
        if (!status.startsWith("HTTP/1.1 101")) return reject(new Error(`the control socket refused the WebSocket upgrade: ${status}`));
        this.socket.on("data", (data: Buffer) => this.#onData(data));
        this.#onData(head.subarray(end + 4));
        resolve();
      };
      this.socket.on("data", onData);
      this.socket.once("error", fail);
      this.socket.on("error", () => {});
      this.socket.on("close", () => {
        for (const pending of this.#pending.values()) {
          clearTimeout(pending.timer);
          pending.reject(new Error(`the control socket closed before ${pending.method} was answered`));
        }
        this.#pending.clear();
      });
      this.socket.once("connect", () => {
        const lines = ["GET / HTTP/1.1", "Host: localhost", "Upgrade: websocket", "Connection: Upgrade"];
        this.socket.write(`${[...lines, `Sec-WebSocket-Key: ${key}`, "Sec-WebSocket-Version: 13"].join("\r\n")}\r\n\r\n`);
      });
    });
  }

  #onData(data: Buffer): void {
    this.#buffer = Buffer.concat([this.#buffer, data]);
    for (;;) {
      const buffer = this.#buffer;
      if (buffer.length < 2) return;
      const fin = (buffer[0]! & 0x80) !== 0;
      const opcode = buffer[0]! & 0x0f;
      const masked = (buffer[1]! & 0x80) !== 0;
      let length = buffer[1]! & 0x7f;
      let offset = 2;
      if (length === 126) {
        if (buffer.length < 4) return;
        length = buffer.readUInt16BE(2);
        offset = 4;
      } else if (length === 127) {
        if (buffer.length < 10) return;
        length = Number(buffer.readBigUInt64BE(2));
        offset = 10;
      }
      const maskAt = offset;
      if (masked) offset += 4;
      if (buffer.length < offset + length) return;
      const payload = Buffer.from(buffer.subarray(offset, offset + length));
      if (masked) for (let i = 0; i < payload.length; i++) payload[i] = payload[i]! ^ buffer[maskAt + (i % 4)]!;
      this.#buffer = buffer.subarray(offset + length);
      if (opcode === OPCODE.ping) this.socket.write(clientFrame(OPCODE.pong, payload));
      else if (opcode === OPCODE.close) this.socket.end();
      else if (opcode === OPCODE.text || opcode === OPCODE.continuation) {
        this.#fragments.push(payload);
        if (fin) {
          const text = Buffer.concat(this.#fragments).toString("utf8");
          this.#fragments = [];
          this.#onMessage(text);
        }
      }
    }
  }

  #onMessage(text: string): void {
    let message: { id?: number; method?: string; result?: unknown; error?: { code: number; message: string } };
    try {
      message = JSON.parse(text);
    } catch {
      return;
    }
    if (message.method !== undefined) {
      // A request of the server's (an approval, say): never left unanswered, never granted by agentmail.
      if (message.id !== undefined)
        this.#send({ jsonrpc: "2.0", id: message.id, error: { code: -32601, message: "agentmail does not answer this" } });
      return;
    }
    const pending = message.id === undefined ? undefined : this.#pending.get(message.id);
    if (!pending) return;
    this.#pending.delete(message.id!);
    clearTimeout(pending.timer);
    if (message.error) pending.reject(new RpcError(pending.method, message.error.code, message.error.message));
    else pending.resolve(message.result);
  }

  #send(message: object): void {
    this.socket.write(clientFrame(OPCODE.text, new TextEncoder().encode(JSON.stringify(message))));
  }

  request<T>(method: string, params: object): Promise<T> {
    const id = this.#nextId++;
    return new Promise<T>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.#pending.delete(id);
        reject(new Error(`no answer to ${method} within ${this.timeoutMs} ms`));
      }, this.timeoutMs);
      this.#pending.set(id, { method, resolve: resolve as (value: unknown) => void, reject, timer });
      this.#send({ jsonrpc: "2.0", id, method, params });
    });
  }

  close(): void {
    for (const pending of this.#pending.values()) clearTimeout(pending.timer);
    this.socket.destroy();
  }

  /** The threads loaded in the daemon, read: a running TUI has its thread loaded. */
  async loadedThreads(): Promise<ThreadInfo[]> {
    const { data } = await this.request<{ data: string[] }>("thread/loaded/list", {});
    const threads: ThreadInfo[] = [];
    for (const threadId of data) threads.push((await this.request<{ thread: ThreadInfo }>("thread/read", { threadId })).thread);
    return threads;
  }

  /** The turn in progress on a thread, if any (a thread before its first message has none). */
  async activeTurn(threadId: string): Promise<string | null> {
    try {
      const { data } = await this.request<{ data: { id: string; status: string }[] }>("thread/turns/list", { threadId, limit: 5 });
      return data.find((turn) => turn.status === "inProgress")?.id ?? null;
    } catch (error) {
      // "is not materialized yet; thread/turns/list is unavailable before first user message": no turn yet.
      if (error instanceof RpcError && /not materialized/.test(error.message)) return null;
      throw error;
    }
  }

  /** Adds text to the running turn: the model reads it with the next request, after the running tool's output. */
  steer(threadId: string, expectedTurnId: string, text: string): Promise<{ turnId: string }> {
    return this.request("turn/steer", { threadId, expectedTurnId, input: [{ type: "text", text, text_elements: [] }] });
  }

  /** Queues text as the thread's next user message: an idle thread starts a turn with it at once. */
  queue(threadId: string, text: string): Promise<{ queuedSubmission: { id: string } }> {
    return this.request("thread/queue/add", {
      threadId,
      clientUserMessageId: randomUUID(),
      input: [{ type: "text", text, text_elements: [] }],
    });
  }
}
