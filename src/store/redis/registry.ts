import { AVAILABILITIES, type Availability } from "../../mail/agents.ts";
import type { AgentEntry } from "../store.ts";

/**
 * An agent's registry document in the namespace's `agents` hash (written only by the scripts WRITE_STATUS and
 * TOUCH): its status as status.ts keeps it (where it lives, `tmux_server` and `tmux_host`, included), plus where
 * it last ran a command. All values are strings. `host` is
 * the agent host of its last command (AGENTMAIL_HOST, else the machine's); a pin's machine is kept apart as
 * `pin_host`, since `name` compares it with this machine's own name.
 */
interface AgentDocument {
  name?: unknown;
  status?: unknown;
  since?: unknown;
  updated_at?: unknown;
  pane?: unknown;
  host?: unknown;
  last_seen_ms?: unknown;
  window?: unknown;
  server?: unknown;
  pin_host?: unknown;
  named_at?: unknown;
  tmux_server?: unknown;
  tmux_host?: unknown;
}

const text = (value: unknown): string | undefined => (typeof value === "string" ? value : undefined);

/**
 * The entry a document describes, or null when it is not one of ours (unparseable, or no known status). A pinned
 * entry's `host` is the pin's machine, as in the file store; otherwise it is the host of the agent's last command.
 */
export function agentEntry(json: string): AgentEntry | null {
  let value: AgentDocument;
  try {
    value = JSON.parse(json) as AgentDocument;
  } catch {
    return null;
  }
  if (typeof value !== "object" || value === null || typeof value.name !== "string") return null;
  if (!(AVAILABILITIES as readonly unknown[]).includes(value.status)) return null;
  const lastSeen = Number(value.last_seen_ms);
  const entry: AgentEntry = {
    name: value.name,
    status: value.status as Availability,
    since: text(value.since) ?? "",
    updated_at: text(value.updated_at) ?? "",
    pane: text(value.pane) ?? "",
  };
  const pinned = text(value.named_at);
  if (pinned !== undefined) {
    Object.assign(entry, { window: text(value.window), server: text(value.server), host: text(value.pin_host), named_at: pinned });
  } else if (text(value.host) !== undefined) entry.host = text(value.host);
  if (Number.isFinite(lastSeen)) entry.last_seen = new Date(lastSeen).toISOString();
  const tmuxServer = text(value.tmux_server);
  const tmuxHost = text(value.tmux_host);
  if (tmuxServer !== undefined && tmuxHost !== undefined) Object.assign(entry, { tmux_server: tmuxServer, tmux_host: tmuxHost });
  return entry;
}

/** The host of the agent's last command, whatever its pin says: what a name clash across hosts is about. */
export function presenceHost(json: string): string | undefined {
  try {
    return text((JSON.parse(json) as AgentDocument).host);
  } catch {
    return undefined;
  }
}
