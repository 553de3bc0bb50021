/**
 * Whether an agent is still there: the holder of a name elsewhere (another host, another tmux server), and the
 * holder of a claim on files.
 *
 * A claim's holder is gone, so its claims no longer count: the holder went offline (its session ended: the
 * SessionEnd hook, or `agentmail status offline`) after it last claimed, or the pane it claimed from is closed and
 * no registration of its name was seen for HOLDER_SEEN_MS (it has not moved to another pane). The pane is looked up
 * on the tmux server it claimed from, when that server runs on this machine; from another host only `offline`
 * tells. Judged before a claim is decided, outside the store's atomic change: a holder judged gone that comes back
 * meanwhile has renewed or claimed again, which the judgment (keyed by the claim's last activity) no longer covers.
 */
import type { FileClaim, Judge } from "../claims/claims.ts";
import { tmuxServerOf } from "./invocation.ts";
import { HOSTNAME } from "../store/durable/process-identity.ts";
import type { AgentEntry, Store } from "../store/store.ts";
import { paneAliveOn, panesOfServer } from "../tmux/other-server.ts";

type Env = Record<string, string | undefined>;

/** A closed window's holder that registered this recently may have moved to another pane: it is not gone yet. */
export const HOLDER_SEEN_MS = 10 * 60_000;

const keyOf = (claim: FileClaim) => `${claim.id}|${claim.active_at}|${claim.pane}`;

/** Why the claim's holder is gone, or null while it may be alive. */
function gone(claim: FileClaim, status: AgentEntry | null, panes: Set<string> | "gone" | null, now: number): string | null {
  if (status?.status === "offline" && Date.parse(status.since) >= Date.parse(claim.active_at)) return "its holder went offline";
  const paneGone = panes === "gone" || (panes instanceof Set && !panes.has(claim.pane));
  if (!paneGone) return null;
  const seen = status ? Date.parse(status.last_seen ?? status.updated_at) : Number.NaN;
  if (now - seen < HOLDER_SEEN_MS) return null;
  return "its holder's window is closed";
}

/** Judgments of the given claims' holders, as a Judge for the claims decisions; claims not judged here count. */
export async function judgeHolders(store: Store, claims: readonly FileClaim[], now: number): Promise<Judge> {
  const statuses = new Map<string, AgentEntry | null>();
  const servers = new Map<string, Set<string> | "gone" | null>();
  for (const claim of claims) {
    if (!statuses.has(claim.holder)) statuses.set(claim.holder, await store.status(claim.holder).catch(() => null));
    if (claim.host === HOSTNAME && claim.server !== null && !servers.has(claim.server))
      servers.set(claim.server, await panesOfServer(claim.server));
  }
  const verdicts = new Map<string, string | null>();
  for (const claim of claims) {
    const panes = claim.host === HOSTNAME && claim.server !== null ? (servers.get(claim.server) ?? null) : null;
    verdicts.set(keyOf(claim), gone(claim, statuses.get(claim.holder) ?? null, panes, now));
  }
  return (claim) => verdicts.get(keyOf(claim)) ?? null;
}

/** A name another host's agent used this recently is still its own: that agent may be alive. */
export const NAME_HELD_MS = 10 * 60_000;

/**
 * Whether `name` is registered from a pane of another tmux server that is alive (as claimName decides, without
 * recording anything): its mail is that agent's.
 */
export async function livesElsewhere(context: { store: Store; env: Env }, name: string): Promise<boolean> {
  const server = tmuxServerOf(context.env);
  const record = await context.store.status(name);
  if (server === null || record?.tmux_server === undefined || record.status === "offline") return false;
  if (record.tmux_server === server && record.tmux_host === HOSTNAME) return false;
  if (record.tmux_host !== HOSTNAME) return Date.now() - Date.parse(record.last_seen ?? record.updated_at) < NAME_HELD_MS;
  return paneAliveOn(record.tmux_server, record.pane, context.env);
}
