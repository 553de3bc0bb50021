/**
 * The MCP line transport in process: framing (split chunks, CRLF, blank lines, a last line without a newline),
 * JSON-RPC errors for lines that are not messages, the line size cap, and closing on end of input or a dead stdout.
 */
import { describe, expect, test } from "bun:test";
import { PassThrough } from "node:stream";
import type { JSONRPCMessage } from "@modelcontextprotocol/sdk/types.js";
import { INVALID_REQUEST, LINE_TOO_LONG, LineTransport, MAX_LINE_BYTES, PARSE_ERROR } from "../../../src/mcp/transport.ts";
import { setSink } from "../../../src/output/streams.ts";
import { waitFor } from "../../support/workflow.ts";

interface Harness {
  input: PassThrough;
  transport: LineTransport;
  received: JSONRPCMessage[];
  written: unknown[];
  errors: string[];
  closed: () => boolean;
}

async function harness(write?: (text: string) => void): Promise<Harness> {
  const input = new PassThrough();
  const written: unknown[] = [];
  const transport = new LineTransport(input, write ?? ((text) => written.push(JSON.parse(text))));
  const received: JSONRPCMessage[] = [];
  const errors: string[] = [];
  let closed = false;
  transport.onmessage = (message) => received.push(message);
  transport.onerror = (error) => errors.push(error.message);
  transport.onclose = () => void (closed = true);
  await transport.start();
  return { input, transport, received, written, errors, closed: () => closed };
}

/**
 * Waits until the input has handed the transport everything written to it (and its end, once ended): the transport
 * handles each chunk as it comes, so by then it has answered or delivered every line.
 */
const settle = (h: Harness) =>
  waitFor(
    "the input to hand over everything written to it",
    () => h.input.writableLength === 0 && h.input.readableLength === 0 && (!h.input.writableEnded || h.input.readableEnded),
    60_000,
    1,
  );

const ping = (id: number) => ({ jsonrpc: "2.0", id, method: "ping" });

describe("LineTransport", () => {
  test("delivers one message per line, however the bytes are split into chunks", async () => {
    const h = await harness();
    const text = `${JSON.stringify(ping(1))}\r\n\n   \n${JSON.stringify(ping(2))}\n`;
    for (const piece of [text.slice(0, 7), text.slice(7, 30), text.slice(30)]) h.input.write(piece);
    await settle(h);
    expect(h.received).toEqual([ping(1), ping(2)] as JSONRPCMessage[]);
    expect(h.written).toEqual([]);
  });

  test("a line that is not JSON gets a parse error with id null, and the next line is still served", async () => {
    const h = await harness();
    h.input.write(`{"jsonrpc": "2.0", "id": 3, "method"\n${JSON.stringify(ping(4))}\n`);
    await settle(h);
    expect(h.written).toEqual([
      { jsonrpc: "2.0", id: null, error: { code: PARSE_ERROR, message: expect.stringContaining("Parse error") } },
    ]);
    expect(h.received).toEqual([ping(4)] as JSONRPCMessage[]);
    expect(h.errors[0]).toContain("Parse error");
  });

  test("JSON that is not JSON-RPC gets an invalid-request error naming its id when it has one", async () => {
    const h = await harness();
    h.input.write(`{"id": 9, "method": 5}\n[1, 2]\n"text"\n`);
    await settle(h);
    expect(h.written).toEqual([
      { jsonrpc: "2.0", id: 9, error: { code: INVALID_REQUEST, message: expect.stringContaining("Invalid Request") } },
      { jsonrpc: "2.0", id: null, error: { code: INVALID_REQUEST, message: expect.any(String) } },
      { jsonrpc: "2.0", id: null, error: { code: INVALID_REQUEST, message: expect.any(String) } },
    ]);
    expect(h.received).toEqual([]);
  });

  test("a last line without a newline is served when the input ends, and the end closes the transport once it is answered", async () => {
    const h = await harness();
    h.input.end(JSON.stringify(ping(5)));
    await settle(h);
    expect(h.received).toEqual([ping(5)] as JSONRPCMessage[]);
    expect(h.closed()).toBe(false);
    await h.transport.send({ jsonrpc: "2.0", id: 5, result: {} } as JSONRPCMessage);
    expect(h.written).toEqual([{ jsonrpc: "2.0", id: 5, result: {} }]);
    expect(h.closed()).toBe(true);
  });

  test("with nothing in flight, the end of the input closes the transport at once", async () => {
    const h = await harness();
    h.input.end();
    await settle(h);
    expect(h.closed()).toBe(true);
  });

  test("a line over the size cap is discarded with an error saying the limit and what to do; the line after it is served", async () => {
    const h = await harness();
    const chunk = "x".repeat(1024 * 1024);
    for (let written = 0; written <= MAX_LINE_BYTES; written += chunk.length) h.input.write(chunk);
    h.input.write(`\n${JSON.stringify(ping(6))}\n`);
    await settle(h);
    expect(h.written).toEqual([{ jsonrpc: "2.0", id: null, error: { code: INVALID_REQUEST, message: LINE_TOO_LONG } }]);
    expect(LINE_TOO_LONG).toContain("longer than 8 MiB (8388608 bytes)");
    expect(LINE_TOO_LONG).toContain("the message argument of send and reply takes at most 262,144 bytes");
    expect(h.received).toEqual([ping(6)] as JSONRPCMessage[]);
  });

  /** The id the answer to an over-long line names, the line being `start`, 9 MiB of text, then `end`. */
  async function idOfOverlong(start: string, end: string): Promise<unknown> {
    const h = await harness();
    h.input.write(start);
    const chunk = "y".repeat(1024 * 1024);
    for (let written = 0; written <= MAX_LINE_BYTES; written += chunk.length) h.input.write(chunk);
    h.input.write(`${end}\n`);
    await settle(h);
    expect(h.written).toHaveLength(1);
    const [reply] = h.written as { id: unknown; error: { message: string } }[];
    expect(reply!.error.message).toBe(LINE_TOO_LONG);
    return reply!.id;
  }

  test("an over-long request is answered with its id, whether the client writes it first or last", async () => {
    const args = '"params":{"name":"reply","arguments":{"id":"abc12345","message":"';
    // Rust (serde) clients put the id first; the TypeScript SDK puts it last, after params.
    expect(await idOfOverlong(`{"jsonrpc":"2.0","id":7,"method":"tools/call",${args}`, '"}}}')).toBe(7);
    expect(await idOfOverlong(`{"method":"tools/call",${args}`, '"}},"jsonrpc":"2.0","id":8}')).toBe(8);
    expect(await idOfOverlong(`{ "jsonrpc" : "2.0" , "id" : "req-9" , "method":"tools/call",${args}`, '"}}}')).toBe("req-9");
    // The reply tool's id argument is not the request's: without a request id at either end, the answer names none.
    expect(await idOfOverlong(`{"method":"tools/call",${args}`, '"}}}')).toBeNull();
    expect(await idOfOverlong("not json at all ", " still not")).toBeNull();
  });

  test("send writes one line to stdout through the output module; nothing is sent once closed", async () => {
    let stdout = "";
    setSink({ stdout: (text) => void (stdout += text), stderr: () => {} });
    try {
      const input = new PassThrough();
      const transport = new LineTransport(input);
      await transport.start();
      await transport.send(ping(7) as JSONRPCMessage);
      await transport.close();
      await transport.close();
      await transport.send(ping(8) as JSONRPCMessage);
      expect(stdout).toBe(JSON.stringify(ping(7)) + "\n");
    } finally {
      setSink(null);
    }
  });

  test("a stdout that cannot be written closes the transport and fails the send", async () => {
    const h = await harness(() => {
      throw new Error("EPIPE");
    });
    await expect(h.transport.send(ping(9) as JSONRPCMessage)).rejects.toThrow("EPIPE");
    expect(h.closed()).toBe(true);
  });

  test("an input error is reported and closes the transport", async () => {
    const h = await harness();
    h.input.emit("error", new Error("EIO"));
    expect(h.errors).toContain("EIO");
    expect(h.closed()).toBe(true);
  });
});
