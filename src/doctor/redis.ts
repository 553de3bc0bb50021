import type { Invocation } from "../identity/invocation.ts";
import { AgentmailError } from "../mail/errors.ts";
import { terminalLine } from "../mail/terminal-text.ts";
import { movedReason } from "../store/moved.ts";
import { openMailServer } from "../store/open.ts";
import { MailServerUnreachable, type ServerInfo, type ServerStore } from "../store/server.ts";
import { note, ok, problem, type Finding } from "./finding.ts";
import { replicationFindings } from "./redis-replication.ts";

/** Exclusive XRANGE bounds (`(id`), which every take walks the mailbox with, came in Redis 6.2. */
const MINIMUM = [6, 2] as const;

function olderThanMinimum(version: string): boolean {
  const [major = 0, minor = 0] = version.split(".").map(Number);
  return major < MINIMUM[0] || (major === MINIMUM[0] && minor < MINIMUM[1]);
}

const EVERYSEC_RISK = "a power cut or kernel crash of the server's machine can lose the last second or two of sends and read marks";

function persistenceFindings(info: ServerInfo): Finding[] {
  if (info.appendonly === false) {
    return [
      problem(
        "store",
        "the mail server's append-only file is off: a restart loses every message since its last snapshot",
        "redis-cli CONFIG SET appendonly yes (and appendonly yes in its config file)",
      ),
    ];
  }
  const policy = info.appendfsync;
  const aof = info.appendonly === null ? "persistence cannot be read (INFO refused)" : "append-only file on";
  if (policy === "always") return [ok("store", `${aof}, fsynced on every write: nothing acknowledged is lost`)];
  if (policy === "everysec")
    return [note("store", `${aof}, appendfsync everysec: ${EVERYSEC_RISK}`, "redis-cli CONFIG SET appendfsync always")];
  if (policy === "no") {
    return [
      problem("store", `${aof}, appendfsync no: the kernel decides when mail reaches the disk`, "redis-cli CONFIG SET appendfsync always"),
    ];
  }
  return [note("store", `${aof}; its fsync policy cannot be read (CONFIG refused): with everysec, ${EVERYSEC_RISK}`)];
}

function versionFinding(version: string | null): Finding {
  if (version === null)
    return note("store", "the server's version cannot be read (INFO refused); the store needs Redis 6.2 or newer, or Valkey");
  const shown = terminalLine(version);
  if (olderThanMinimum(version))
    return problem("store", `the mail server runs Redis ${shown}, older than 6.2`, "upgrade it to Redis 6.2 or newer (or Valkey)");
  return ok("store", `the mail server runs Redis ${shown}`);
}

/**
 * `doctor`'s checks of the Redis store AGENTMAIL_URL names: its settings, whether the server answers (and why not),
 * its version, its persistence, the namespace in use and how many agents are registered there; then its sentinels
 * and replicas (redis-replication.ts).
 */
export async function redisFindings(invocation: Invocation): Promise<Finding[]> {
  let store: ServerStore | null;
  try {
    store = await openMailServer(invocation);
  } catch (error) {
    return [problem("store", error instanceof Error ? error.message : String(error), null)];
  }
  if (store === null) return [];
  // The sentinels and replicas are reported even when the store cannot be reached: they may say why.
  const replication = replicationFindings(await store.topology());
  try {
    const info = await store.serverInfo();
    const namespace = terminalLine(store.namespace);
    const given = invocation.env.AGENTMAIL_NAMESPACE?.trim() ? "AGENTMAIL_NAMESPACE" : "the repository's origin remote";
    const agents = `${info.agents} agent${info.agents === 1 ? "" : "s"} registered`;
    // A user refused GET cannot use the store at all; the finding that says so is not this one's.
    const moved = await store.moved().catch((error: unknown) => {
      if (error instanceof MailServerUnreachable) throw error;
      return null;
    });
    return [
      moved
        ? problem("store", `${movedReason(store.label, moved)}; every command here fails`, moved.use)
        : ok("store", `the Redis store at ${store.location}, namespace ${namespace} (from ${given}): ${agents}`),
      versionFinding(info.version),
      ...persistenceFindings(info),
      ...replication,
    ];
  } catch (error) {
    if (!(error instanceof AgentmailError)) throw error;
    return [problem("store", error.message, "start the server, or point AGENTMAIL_URL at one that runs"), ...replication];
  } finally {
    store.close();
  }
}
