/**
 * AGENTMAIL_NAME: an identity that needs no tmux call.
 *
 * An agent started with `AGENTMAIL_NAME=<name>` in its environment names itself. The name is trusted without asking
 * tmux only once the agent has claimed it: it registered (`status`, `onboard`, the installed hooks) from a pane whose
 * window tmux named exactly that, the only window of that name on the server. The claim records the pane, the tmux
 * server and the machine, and a later call is trusted when it comes from that very pane of that very server, while
 * the agent is not offline. A claim holds until another pane registers the name (a move, serialized with receives by
 * the name's receive lock), the agent goes offline, or cleanup forgets it; renaming the window does not move it: the
 * name belongs to the agent, not to the window's label. Everything that cannot be trusted this way asks tmux, and
 * there AGENTMAIL_NAME must agree with what tmux says, or the call is refused: a wrong identity is worse than a slow
 * one. A shared (Redis) store keeps no claims (Store.nameClaims is null): there AGENTMAIL_NAME must agree with tmux
 * on every call.
 */
import { addressProblem } from "../mail/addresses.ts";
import { AgentmailError } from "../mail/errors.ts";
import { displayName } from "../mail/names.ts";
import { HOSTNAME } from "../store/durable/process-identity.ts";
import type { ClaimPlace, NameClaim, NameClaims } from "../store/store.ts";
import { tmuxServerOf } from "./invocation.ts";

type Env = Record<string, string | undefined>;

export const NAME_VARIABLE = "AGENTMAIL_NAME";

/** The name the environment gives, if any (an empty value gives none). */
export function namedInEnvironment(env: Env): string | null {
  return env[NAME_VARIABLE] || null;
}

const sameServer = (claim: NameClaim, env: Env) => claim.server === tmuxServerOf(env) && claim.host === HOSTNAME;

/** Whether a claim is held by the pane this environment runs in. */
function heldHere(claim: NameClaim | null, env: Env): boolean {
  return claim?.active === true && claim.pane === env.TMUX_PANE && sameServer(claim, env);
}

/**
 * The caller's name from AGENTMAIL_NAME when its claim is this pane's: no tmux call needed. Null otherwise, and for a
 * name no agent may carry (a claim made before agentmail reserved it): then tmux is asked, and refuses it.
 */
export function trustedName(claims: NameClaims, env: Env): string | null {
  const name = namedInEnvironment(env);
  return name !== null && addressProblem(name) === null && heldHere(claims.claimOf(name), env) ? name : null;
}

/** The claim on `name` held by a live agent of this tmux server: mail to it needs no tmux call. */
export function activeClaim(claims: NameClaims | null, name: string, env: Env): NameClaim | null {
  if (claims === null) return null;
  const claim = claims.claimOf(name);
  return claim?.active && sameServer(claim, env) ? claim : null;
}

/** Checked again under the receive lock, so that a claim moved meanwhile takes no mail through the old holder. */
export function requireClaimStillHeld(claims: NameClaims, name: string, env: Env): void {
  if (heldHere(claims.claimOf(name), env)) return;
  const moved = `your claim on "${displayName(name)}" (${NAME_VARIABLE}) moved to another pane or ended while receiving`;
  throw new AgentmailError("name_mismatch", `${moved}; run agentmail receive again`);
}

/** On the tmux path, for a caller without a claim here: a name the environment gives must be the one tmux gives. */
export function requireTmuxAgrees(env: Env, windowName: string): void {
  const named = namedInEnvironment(env);
  if (named === null) return;
  const problem = addressProblem(named);
  if (problem !== null) {
    throw new AgentmailError(
      "invalid_name",
      `${NAME_VARIABLE} is "${displayName(named)}", which cannot be an agent's name: ${problem}; set ${NAME_VARIABLE} to another name, or unset it`,
    );
  }
  if (named === windowName) return;
  const pane = displayName(env.TMUX_PANE ?? "");
  throw new AgentmailError(
    "name_mismatch",
    `${NAME_VARIABLE} is "${displayName(named)}" but the window of pane ${pane} is named "${displayName(windowName)}"; ` +
      `name the window "${displayName(named)}" (tmux rename-window -t ${pane} <name>) or unset ${NAME_VARIABLE}`,
  );
}

/**
 * A name held by another pane's claim: only that pane sends and receives as it. Another window that carries the
 * name now (say, a new window after the claimant's was renamed) is refused until it registers and so takes the
 * name over.
 */
export function requireNoClaimElsewhere(claims: NameClaims | null, name: string, env: Env): void {
  const claim = activeClaim(claims, name, env);
  if (claim === null || claim.pane === env.TMUX_PANE) return;
  throw new AgentmailError(
    "duplicate_name",
    `"${displayName(name)}" is claimed by pane ${displayName(claim.pane)}, an agent started with ${NAME_VARIABLE}=${displayName(name)}; ` +
      `give this window another name, or run 'agentmail status ready' here to take the name over`,
  );
}

/**
 * What a registration of `name` records as its claim: the tmux server and machine when AGENTMAIL_NAME names the
 * caller and either its claim is already this pane's or tmux agrees (the caller's window has the name, and it is the
 * only window of the server that has it); nothing otherwise: a plain registration, which moves any claim away.
 */
export function claimFor(env: Env, name: string, claimedHere: boolean, windowsWithName: number): ClaimPlace | undefined {
  const server = tmuxServerOf(env);
  if (namedInEnvironment(env) !== name || server === null || !(claimedHere || windowsWithName === 1)) return undefined;
  return { server, host: HOSTNAME };
}
