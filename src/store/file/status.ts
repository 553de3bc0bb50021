import { mkdirSync, readdirSync, readFileSync, unlinkSync } from "node:fs";
import { join } from "node:path";
import { decodeName, encodeName } from "../../mail/names.ts";
import { AVAILABILITIES } from "../../mail/agents.ts";
import { replaceFile } from "../durable/files.ts";
import { clearReady, readyMark } from "../local/doorbell.ts";
import { AGENTS_DIR } from "../local/layout.ts";
import type { AgentStatus, Registration } from "../store.ts";

/** Statuses live in `<root>/.agents/`, out of the mailbox namespace (no encoded name starts with a dot). */
const statusDir = (root: string) => join(root, AGENTS_DIR);
const statusPath = (root: string, name: string) => join(statusDir(root), `${encodeName(name)}.json`);

/**
 * The agent's registration, with the Stop hook's ready mark applied: a hook whose shell found no mail marks the agent
 * ready without starting agentmail (doorbell.ts), and a mark outlives only until agentmail writes a status again.
 */
export function readStatus(root: string, name: string): AgentStatus | null {
  const record = readRecord(root, name);
  const mark = record && readyMark(root, name);
  if (!record || !mark) return record;
  const at = mark.toISOString();
  return { ...record, status: "ready", since: record.status === "ready" ? record.since : at, updated_at: at };
}

function readRecord(root: string, name: string): AgentStatus | null {
  try {
    const value = JSON.parse(readFileSync(statusPath(root, name), "utf8")) as AgentStatus;
    return typeof value?.status === "string" && (AVAILABILITIES as readonly string[]).includes(value.status) ? { ...value, name } : null;
  } catch {
    return null;
  }
}

/**
 * Each agent has its own file, replaced atomically: no lock, no torn reads. `pin` records a name pinned by
 * `agentmail name`; a pin already there is kept while the same pane writes, and so is `place` (where it lives).
 */
export function writeStatus(root: string, { name, status, pane, at: now = new Date(), pin, claim, place }: Registration): AgentStatus {
  const previous = readStatus(root, name);
  const record: AgentStatus = {
    name,
    status,
    since: previous?.status === status ? previous.since : now.toISOString(),
    updated_at: now.toISOString(),
    pane,
  };
  if (pin) Object.assign(record, { ...pin, named_at: now.toISOString() });
  else if (previous?.pane === pane && previous.named_at) {
    Object.assign(record, { window: previous.window, server: previous.server, host: previous.host, named_at: previous.named_at });
  }
  // A claim is never carried over: each registration makes it again, or drops it (see store/file/registry.ts).
  if (claim) Object.assign(record, { claim_server: claim.server, claim_host: claim.host });
  const where =
    place ?? (previous?.pane === pane && previous.tmux_server ? { server: previous.tmux_server, host: previous.tmux_host! } : null);
  if (where) Object.assign(record, { tmux_server: where.server, tmux_host: where.host });
  mkdirSync(statusDir(root), { recursive: true, mode: 0o700 });
  replaceFile(statusPath(root, name), JSON.stringify(record) + "\n");
  // This status is now the latest word, not the Stop hook's mark of an earlier turn.
  clearReady(root, name);
  return record;
}

export function listStatuses(root: string): AgentStatus[] {
  let files: string[];
  try {
    files = readdirSync(statusDir(root));
  } catch {
    return [];
  }
  const statuses: AgentStatus[] = [];
  for (const file of files) {
    const name = file.endsWith(".json") ? decodeName(file.slice(0, -5)) : null;
    const status = name === null ? null : readStatus(root, name);
    if (status) statuses.push(status);
  }
  return statuses;
}

export function removeStatus(root: string, name: string): void {
  try {
    unlinkSync(statusPath(root, name));
  } catch {
    // Already gone.
  }
}
