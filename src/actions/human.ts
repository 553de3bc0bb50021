/**
 * The person who runs the agents, writing from `watch` or `web`: a sender that needs no tmux window. Their name is
 * set once, as `AGENTMAIL_HUMAN` (or `--as NAME` for one run): a valid agent name that no agent has (no registered
 * agent, no other window of the tmux server). Mail they send goes through the same delivery as `agentmail send`
 * (send.ts), so agents receive it with `agentmail receive` like any other, from that name. A view registers them as
 * a person (PERSON_PANE, store/file/status.ts), so agents can write and reply to them by that name; it lands in the mailbox of that
 * name, which the views show as theirs.
 *
 * Whom they can address: what a window of the view's project can (identity/person.ts: this project's windows on every
 * tmux server the room looks at, other projects' as `name@project`), and every agent the store has registered (from
 * any host), since the person watches the whole room, not one session.
 */
import { acknowledge as acknowledgeMail } from "./follow.ts";
import { isRoleAddress, parseAddresses, roleAddress, senderAddress, validateName, type Address } from "../mail/addresses.ts";
import { AgentmailError } from "../mail/errors.ts";
import { mailFields, replyFields, type MailFieldInput } from "../mail/fields.ts";
import { validateBody, type Message } from "../mail/message.ts";
import { displayName } from "../mail/names.ts";
import { PERSON_PANE } from "../store/store.ts";
import type { CallerContext } from "../identity/caller.ts";
import { agentHost, type Invocation } from "../identity/invocation.ts";
import { openStore } from "../store/open.ts";
import { findRepository } from "../store/paths.ts";
import type { AgentEntry, Store } from "../store/store.ts";
import { personView } from "../identity/person.ts";
import type { Caller, Window } from "../tmux/caller.ts";
import { deliver, resolveRecipients } from "./send.ts";

export const HUMAN_VARIABLE = "AGENTMAIL_HUMAN";

const SET_NAME = `set your name once: export ${HUMAN_VARIABLE}=<name> (or give --as <name>)`;

/** The person's name: `--as` when given, else AGENTMAIL_HUMAN; null when neither is set. Checked as an agent name. */
export function humanName(invocation: Invocation, given?: string): string | null {
  const name = given ?? invocation.env[HUMAN_VARIABLE];
  if (name === undefined || name === "") return null;
  try {
    return validateName("agent", name);
  } catch (error) {
    const where = given === undefined ? HUMAN_VARIABLE : "--as";
    throw new AgentmailError("invalid_name", `${where}: ${(error as AgentmailError).message}`);
  }
}

/** The name, or the refusal a write gets when none is set. */
export function requireHuman(name: string | null): string {
  if (name === null) throw new AgentmailError("usage", `writing needs your name as sender; ${SET_NAME}`);
  return name;
}

/**
 * Refused when an agent has the name: a registered agent (not a person), or a window of this project on any tmux
 * server the room looks at (identity/person.ts) other than the person's own.
 */
function requireNoAgentNamed(name: string, statuses: readonly AgentEntry[], caller: Caller): void {
  const clash =
    statuses.some((entry) => entry.name === name && entry.pane !== PERSON_PANE) ||
    caller.serverWindows.some((window) => window.name === name && window.id !== caller.windowId);
  if (clash) {
    throw new AgentmailError("name_taken", `"${displayName(name)}" is an agent's name, not yours to use; ${SET_NAME} to one no agent has`);
  }
}

/**
 * Registers the person under their name (PERSON_PANE, store/file/status.ts), so agents anywhere can write to them: `ready` while a
 * view runs, `offline` after. Refused when an agent has the name.
 */
export async function registerHuman(invocation: Invocation, store: Store, name: string, status: "ready" | "offline"): Promise<void> {
  if (status === "ready") {
    const statuses = await store.statuses();
    const { caller } = await personView(invocation, findRepository(invocation.cwd, invocation.env), statuses);
    requireNoAgentNamed(name, statuses, caller);
  }
  await store.writeStatus({ name, status, pane: PERSON_PANE });
}

/**
 * The person as a sender, resolving addresses as a window of the view's project does (identity/person.ts): this
 * project's windows on every tmux server the room looks at, every registered agent and person of the store, and
 * other projects' windows as `name@project`. Refused when an agent has the name.
 */
export async function humanContext(invocation: Invocation, name: string): Promise<CallerContext> {
  const repository = findRepository(invocation.cwd, invocation.env);
  const store = await openStore(invocation, repository);
  const statuses = await store.statuses();
  const view = await personView(invocation, repository, statuses);
  requireNoAgentNamed(name, statuses, view.caller);
  const windows: Window[] = [...view.caller.windows];
  const known = new Set(windows.map((window) => window.name));
  for (const entry of statuses) {
    if (known.has(entry.name)) continue;
    known.add(entry.name);
    windows.push({ id: "", name: entry.name, active: false, auto: false, paneId: entry.pane, sessionId: "", sessionName: "", path: "" });
  }
  return {
    store,
    claims: store.nameClaims,
    caller: { ...view.caller, name, windows },
    host: agentHost(invocation.env),
    workTree: repository?.workTree ?? null,
    env: invocation.env,
    claimed: false,
    repository,
    projects: view.projects,
  };
}

/** Mail from the person, stored exactly as `agentmail send` stores it; returns the first copy. */
export async function sendAsHuman(
  invocation: Invocation,
  name: string,
  recipients: string,
  body: string,
  input: MailFieldInput = {},
  warn?: (warning: string) => void,
): Promise<Message> {
  validateBody(body);
  const fields = mailFields(input);
  const addresses = parseAddresses([recipients]);
  refuseBridges(addresses);
  return deliver(await humanContext(invocation, name), addresses, body, fields, { warn });
}

/**
 * Whom a compose's To reaches, resolved exactly as its send will be (nothing stored): the mailboxes, as the person
 * names them, and what the send would warn of. Refused as the send would be.
 */
export async function checkAsHuman(
  invocation: Invocation,
  name: string,
  recipients: string,
): Promise<{ to: string[]; warnings: string[] }> {
  const addresses = parseAddresses([recipients]);
  refuseBridges(addresses);
  const warnings: string[] = [];
  // The other projects' stores stay open: a Redis store is kept for the process (store/open.ts), and the send uses it.
  const { plan, remote } = await resolveRecipients(await humanContext(invocation, name), addresses, (warning) => warnings.push(warning));
  const to = [...plan.agents, ...plan.roles.map((role) => roleAddress(role)), ...remote.map((copy) => copy.shown)];
  return { to, warnings: [...warnings, ...plan.warnings] };
}

/**
 * A reply from the person to `original` (any message they can see): to its sender (to its recipient when they
 * sent it themselves), in its thread, `Re:` its subject. A message in their own mailbox is acknowledged (and marked
 * read) once the reply is stored.
 */
export async function replyAsHuman(
  invocation: Invocation,
  name: string,
  original: { message: Message; mailbox: string },
  body: string,
  input: MailFieldInput = {},
): Promise<Message> {
  validateBody(body);
  const fields = replyFields(original.message, mailFields(input), input.type !== undefined);
  const to = replyAddressee(original, name);
  // A sender's name, not address syntax: `name@project` is another project's agent (mail/addresses.ts senderAddress).
  const address = isRoleAddress(to) ? parseAddresses([to])[0]! : senderAddress(to);
  const addresses = [address];
  const context = await humanContext(invocation, name);
  // Its sender wrote to the store, so it is an agent even when no window or registration names it now.
  const windows = context.caller.windows;
  if (address.kind === "agent" && address.project === undefined && !windows.some((window) => window.name === to)) {
    windows.push({ id: "", name: to, active: false, auto: false, paneId: "", sessionId: "", sessionName: "", path: "" });
  }
  const message = await deliver(context, addresses, body, fields);
  // A reply to their own mail acknowledges it (and marks it read), as an agent's reply does.
  if (original.mailbox === name) await acknowledgeMail(context.store, name, [original.message.id], message.id);
  return message;
}

/** Whom the person's reply to `original` goes to, as they name it: its sender (`name@project` from another project), or its recipient when they sent it. */
export const replyAddressee = (original: { message: Message; mailbox: string }, name: string): string =>
  original.message.from === name ? original.mailbox : original.message.from;

/** Acknowledges a message of the person's own mailbox (and marks it read): its sender's `sent` says so. */
export async function acknowledge(store: Store, name: string, id: string): Promise<void> {
  await acknowledgeMail(store, name, [id]);
}

/** Moves a message of the person's own mailbox to its archive. */
export async function archiveOwn(store: Store, name: string, id: string): Promise<void> {
  await store.archive(name, { ids: [id] }, false);
}

function refuseBridges(addresses: readonly Address[]): void {
  for (const address of addresses) {
    if (address.kind === "bridge") {
      throw new AgentmailError(
        "usage",
        `"${displayName(address.scheme)}:" addresses go through a bridge, which the room does not send to; use agentmail send in a tmux window`,
      );
    }
  }
}
