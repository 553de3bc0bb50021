import { mkdirSync, readdirSync, readFileSync, unlinkSync } from "node:fs";
import { join } from "node:path";
import { decodeName, encodeName } from "../core/names.ts";
import { AVAILABILITIES, type Availability } from "../core/availability.ts";
import { replaceFile } from "./files.ts";
import { clearReady, readyMark } from "./doorbell.ts";
import { AGENTS_DIR } from "./layout.ts";

// The Redis store takes them from here too.
export { AVAILABILITIES, type Availability };

export interface AgentStatus {
  name: string;
  status: Availability;
  /** When the status last changed. */
  since: string;
  /** When the agent last set it (even to the same value): what `cleanup --stale-hours` looks at. */
  updated_at: string;
  /** The pane that set it, so the mailman can type into exactly that pane. */
  pane: string;
  /**
   * Set by `agentmail name`, which pinned the window's name (tmux will not rename it): the window (`@N`), the tmux
   * server (`$TMUX` without its session part: socket path and server pid, so a restarted server, whose pane ids
   * start again, is another one) and when. Kept while the same pane writes its status. A pin is not trusted
   * without asking tmux: a rename could not be seen in time (README, AGENTMAIL_NAME); a claim (below) is.
   */
  window?: string;
  server?: string;
  /** The machine the tmux server runs on: a socket path and pid only mean something there. */
  host?: string;
  named_at?: string;
  /**
   * Set only when the agent registered with AGENTMAIL_NAME naming it and tmux agreeing (see actions/identity.ts):
   * the tmux server of its pane and the machine. Such a registration is a claim: that pane's later calls that give
   * the same AGENTMAIL_NAME are trusted without asking tmux (store/registry.ts reads and writes it).
   */
  claim_server?: string;
  claim_host?: string;
}

/** What `agentmail name` records besides the status: see AgentStatus. */
export interface Pin {
  window: string;
  server: string;
  host: string;
}

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
 * `agentmail name`; a pin already there is kept while the same pane writes.
 */
export function writeStatus(
  root: string,
  name: string,
  status: Availability,
  pane: string,
  now = new Date(),
  pin?: Pin,
  claim?: { server: string; host: string },
): AgentStatus {
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
  // A claim is never carried over: each registration makes it again, or drops it (see store/registry.ts).
  if (claim) Object.assign(record, { claim_server: claim.server, claim_host: claim.host });
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
