/**
 * Codex CLI's control socket spoken to directly, apart from agentmail's own client (src/mailman/codex-control.ts),
 * so a test of the protocol checks Codex, not agentmail: WebSocket over a unix socket, JSON-RPC in text frames.
 */
import { existsSync } from "node:fs";
import { connect } from "node:net";
import { join } from "node:path";
import { until } from "./interactive.ts";

/** A JSON-RPC exchange over the control socket (WebSocket over unix), written here apart from agentmail's client. */
export class RawControl {
  private buffer = Buffer.alloc(0);
  private readonly answers = new Map<number, { result?: unknown; error?: { code: number; message: string } }>();
  private constructor(private readonly socket: ReturnType<typeof connect>) {}

  static async open(path: string): Promise<RawControl> {
    const socket = connect(path);
    const control = new RawControl(socket);
    await new Promise<void>((resolve, reject) => {
      socket.once("error", reject);
      socket.once("connect", () => {
        const key = Buffer.from(crypto.getRandomValues(new Uint8Array(16))).toString("base64");
        socket.write(
          `GET / HTTP/1.1\r\nHost: localhost\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: ${key}\r\nSec-WebSocket-Version: 13\r\n\r\n`,
        );
      });
      let head = Buffer.alloc(0);
      const onHead = (chunk: Buffer) => {
        head = Buffer.concat([head, chunk]);
        const end = head.indexOf("\r\n\r\n");
        if (end < 0) return;
        socket.off("data", onHead);
        if (!head.toString().startsWith("HTTP/1.1 101")) return reject(new Error(head.toString()));
        socket.on("data", (data: Buffer) => control.read(data));
        control.read(head.subarray(end + 4));
        resolve();
      };
      socket.on("data", onHead);
    });
    return control;
  }

  private read(data: Buffer): void {
    this.buffer = Buffer.concat([this.buffer, data]);
    while (this.buffer.length >= 2) {
      let length = this.buffer[1]! & 0x7f;
      let offset = 2;
      if (length === 126) [length, offset] = [this.buffer.readUInt16BE(2), 4];
      else if (length === 127) [length, offset] = [Number(this.buffer.readBigUInt64BE(2)), 10];
      if (this.buffer.length < offset + length) return;
      const payload = this.buffer.subarray(offset, offset + length).toString();
      this.buffer = this.buffer.subarray(offset + length);
      try {
        const message = JSON.parse(payload);
        if (message.id !== undefined && (message.result !== undefined || message.error !== undefined))
          this.answers.set(message.id, message);
      } catch {
        // A ping or close frame.
      }
    }
  }

  private next = 1;
  async call(method: string, params: object): Promise<{ result?: any; error?: { code: number; message: string } }> {
    const id = this.next++;
    const payload = Buffer.from(JSON.stringify({ jsonrpc: "2.0", id, method, params }));
    const mask = Buffer.from(crypto.getRandomValues(new Uint8Array(4)));
    const header =
      payload.length < 126
        ? Buffer.from([0x81, 0x80 | payload.length])
        : Buffer.from([0x81, 0x80 | 126, payload.length >> 8, payload.length & 0xff]);
    this.socket.write(Buffer.concat([header, mask, Buffer.from(payload.map((byte, i) => byte ^ mask[i % 4]!))]));
    return until(`the answer to ${method}`, () => this.answers.get(id), 10_000);
  }

  close(): void {
    this.socket.destroy();
  }
}

/** Whether the daemon of `codexHome` has a loaded, non-ephemeral, idle thread in `cwd`. */
export async function loadedIn(codexHome: string, cwd: string): Promise<boolean> {
  const socket = join(codexHome, "app-server-control", "app-server-control.sock");
  if (!existsSync(socket)) return false;
  let control: RawControl | null = null;
  try {
    control = await RawControl.open(socket);
    await control.call("initialize", { clientInfo: { name: "agentmail-tests", version: "1" }, capabilities: { experimentalApi: true } });
    const loaded = (await control.call("thread/loaded/list", {})).result?.data as string[];
    for (const threadId of loaded ?? []) {
      const thread = (await control.call("thread/read", { threadId })).result?.thread;
      if (thread?.cwd === cwd && thread.ephemeral === false && thread.status?.type === "idle") return true;
    }
    return false;
  } catch {
    return false;
  } finally {
    control?.close();
  }
}
