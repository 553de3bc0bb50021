/**
 * What `doctor` reports of the servers behind a Redis store: what each sentinel says (on a Sentinel URL), the server
 * the store reaches, its role and its replicas with how far behind each is (INFO replication), and what a write waits
 * for (`replicas=`).
 */
import type { Connection } from "./connection.ts";
import type { ReplicaView, Topology } from "../server.ts";
import { nodeName } from "./sentinel.ts";
import { redact, type ServerAddress } from "./url.ts";

/** `field:value` lines of an INFO section. */
function infoFields(text: string): Map<string, string> {
  const fields = new Map<string, string>();
  for (const line of text.split(/\r?\n/)) {
    const colon = line.indexOf(":");
    if (colon > 0) fields.set(line.slice(0, colon), line.slice(colon + 1).trim());
  }
  return fields;
}

/** The replicas of an INFO replication reply: `slaveN:ip=…,port=…,state=…,offset=…,lag=…`. */
export function replicasOf(info: string): { role: string | null; replicas: ReplicaView[] } {
  const fields = infoFields(info);
  const offset = Number(fields.get("master_repl_offset") ?? 0);
  const replicas: ReplicaView[] = [];
  for (const [key, value] of fields) {
    if (!/^slave\d+$/.test(key)) continue;
    const parts = new Map(value.split(",").map((part) => part.split("=", 2) as [string, string]));
    replicas.push({
      node: nodeName({ host: parts.get("ip") ?? "?", port: Number(parts.get("port") ?? 0) }),
      state: parts.get("state") ?? "?",
      behindBytes: Math.max(0, offset - Number(parts.get("offset") ?? 0)),
      lagSeconds: Number(parts.get("lag") ?? 0),
    });
  }
  return { role: fields.get("role") ?? null, replicas };
}

export async function readTopology(connection: Connection, address: ServerAddress): Promise<Topology> {
  const topology: Topology = {
    // A sentinel's error text is the client's: redacted, as every text that did not come from us.
    sentinels: connection.sentinels
      ? (await connection.sentinels.report()).map((view) => ({ ...view, error: view.error === null ? null : redact(view.error, address) }))
      : null,
    primaryName: address.sentinel?.primary ?? null,
    server: null,
    role: null,
    replicas: [],
    wanted: address.replicas,
    replicaTimeoutMs: address.replicaTimeoutMs,
  };
  try {
    const server = await connection.server();
    topology.server = server.transport === "unix" ? server.socket : nodeName(server);
    Object.assign(topology, replicasOf(String(await connection.command("INFO", ["replication"]))));
  } catch {
    // Unreachable (the store's own finding says why), or INFO refused (a limited user): nothing more to report.
  }
  return topology;
}
