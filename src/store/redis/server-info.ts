/** What `doctor` asks of the server behind a Redis store (ServerStore in ../server.ts). */
import { MailServerUnreachable, type ServerInfo } from "../server.ts";
import { hashOf } from "./entries.ts";
import type { Keyspace } from "./keyspace.ts";

/**
 * What `doctor` checks: the namespace's registered agents (which also proves the server answers), the server's
 * version and its persistence settings. INFO and CONFIG are often refused (a managed server, a limited user): what
 * cannot be read is null.
 */
export async function serverInfo(space: Keyspace): Promise<ServerInfo> {
  const agents = Number(await space.connection.command("HLEN", [space.key("agents")]));
  const refused = (error: unknown) => {
    if (error instanceof MailServerUnreachable) throw error;
    return null;
  };
  const [server, persistence, config] = (await Promise.all([
    space.connection.command("INFO", ["server"]).catch(refused),
    space.connection.command("INFO", ["persistence"]).catch(refused),
    space.connection.command("CONFIG", ["GET", "appendfsync"]).catch(refused),
  ])) as [string | null, string | null, unknown];
  const aof = persistence === null ? null : /^aof_enabled:(\d)/m.exec(persistence)?.[1];
  return {
    agents,
    version: server === null ? null : (/^redis_version:(.+)$/m.exec(server)?.[1]?.trim() ?? null),
    appendonly: aof === null || aof === undefined ? null : aof === "1",
    appendfsync: hashOf(config).get("appendfsync") ?? null,
  };
}
