/**
 * What the MCP tests share: the tool names an agent sees, and a client of createServer() on an in-memory transport
 * (the server in process, so coverage counts it).
 */
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
import type { Invocation } from "../../src/identity/invocation.ts";
import { createServer } from "../../src/mcp/server.ts";

/** The fourteen tools, in the order tools/list gives them. */
export const MCP_TOOL_NAMES = [
  "send",
  "sent",
  "ack",
  "receive",
  "wait",
  "status",
  "list-recipients",
  "reply",
  "inbox",
  "read",
  "thread",
  "claim",
  "release",
  "claims",
];

/** A connected client of a server that serves `place`; it is added to `clients`, which the caller closes. */
export async function connectInMemory(clients: Client[], place: Invocation, heartbeatMs?: number): Promise<Client> {
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  await createServer(() => place, heartbeatMs).connect(serverSide);
  const client = new Client({ name: "test", version: "1.0.0" });
  await client.connect(clientSide);
  clients.push(client);
  return client;
}
