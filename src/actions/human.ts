/**
 * The person who runs the agents, writing from `watch` or `web`: a sender that needs no tmux window. Their name is
 * set once, as `AGENTMAIL_HUMAN` (or `--as NAME` for one run): a valid agent name that no agent has (no registered
 * agent, no other window of the tmux server). Mail they send goes through the same delivery as `agentmail send`
 * (send.ts), so agents receive it with `agentmail receive` like any other, from that name. A view registers them as
 * a person (PERSON_PANE, store/status.ts), so agents can write and reply to them by that name; it lands in the mailbox of that
 * name, which the views show as theirs.
 *
 * Whom they can address: the windows of their tmux session when they run inside tmux, and every agent the store has
 * registered (from any host), since the person watches the whole room, not one session.
 */
import { acknowledge as acknowledgeMail } from "./follow.ts";
import { parseAddresses, roleAddress, validateName, type Address } from "../mail/addresses.ts";
import { AgentmailError } from "../mail/errors.ts";
import { mailFields, replyFields, type MailFieldInput } from "../mail/fields.ts";
import { validateBody, type Message } from "../mail/message.ts";
import { displayName } from "../mail/names.ts";
import { PERSON_PANE } from "../store/status.ts";
import type { CallerContext } from "../identity/caller.ts";
import { agentHost, type Invocation } from "../identity/invocation.ts";
import { openStoreAndRoot } from "../store/open.ts";
import { findRepository } from "../store/paths.ts";
import type { AgentEntry, Store } from "../store/store.ts";
import { resolveCaller, type Caller, type Window } from "../tmux/caller.ts";
import { deliver } from "./send.ts";

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

/** The caller's tmux view when inside tmux (their session's windows), else none: a person needs no window. */
async function tmuxView(invocation: Invocation): Promise<Caller | null> {
  if (!invocation.env.TMUX || !invocation.env.TMUX_PANE) return null;
  try {
    return await resolveCaller(invocation.env);
  } catch {
    return null;
  }
}

/** Refused when an agent has the name: a registered agent (not a person), or a window other than the person's own. */
function requireNoAgentNamed(name: string, statuses: readonly AgentEntry[], view: Caller | null): void {
  const clash =
    statuses.some((entry) => entry.name === name && entry.pane !== PERSON_PANE) ||
    (view?.serverWindows.some((window) => window.name === name && window.id !== view.windowId) ?? false);
  if (clash) {
    throw new AgentmailError("name_taken", `"${displayName(name)}" is an agent's name, not yours to use; ${SET_NAME} to one no agent has`);
  }
}

/**
 * Registers the person under their name (PERSON_PANE, store/status.ts), so agents anywhere can write to them: `ready` while a
 * view runs, `offline` after. Refused when an agent has the name.
 */
export async function registerHuman(invocation: Invocation, store: Store, name: string, status: "ready" | "offline"): Promise<void> {
  if (status === "ready") requireNoAgentNamed(name, await store.statuses(), await tmuxView(invocation));
  await store.writeStatus(name, status, PERSON_PANE);
}

/**
 * The person as a sender: their name, the windows of their session (if any) and every registered agent (and
 * person) as addressable. Refused when an agent has the name.
 */
export async function humanContext(invocation: Invocation, name: string): Promise<CallerContext> {
  const repository = findRepository(invocation.cwd, invocation.env);
  const { store, fileRoot } = await openStoreAndRoot(invocation, repository);
  const view = await tmuxView(invocation);
  const statuses = await store.statuses();
  requireNoAgentNamed(name, statuses, view);
  const windows: Window[] = [...(view?.windows ?? [])];
  const known = new Set(windows.map((window) => window.name));
  for (const entry of statuses) {
    if (known.has(entry.name)) continue;
    known.add(entry.name);
    windows.push({ id: "", name: entry.name, active: false, auto: false, paneId: entry.pane, sessionId: "", sessionName: "", path: "" });
  }
  const caller: Caller = {
    paneId: view?.paneId ?? "",
    sessionId: view?.sessionId ?? "",
    windowId: view?.windowId ?? "",
    name,
    windows,
    serverWindows: view?.serverWindows ?? [],
  };
  return {
    store,
    claims: fileRoot,
    caller,
    host: agentHost(invocation.env),
    workTree: repository?.workTree ?? null,
    env: invocation.env,
    claimed: false,
    repository,
    // The person writes from the room, to the agents the store knows: no window is sorted out by project.
    projects: { own: null, elsewhere: [], outside: [] },
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
  const to = original.message.from === name ? original.mailbox : original.message.from;
  const addresses = to.startsWith(roleAddress("")) ? parseAddresses([to]) : [{ kind: "agent", name: to } as const];
  const context = await humanContext(invocation, name);
  // Its sender wrote to the store, so it is an agent even when no window or registration names it now.
  const windows = context.caller.windows;
  if (addresses[0]!.kind === "agent" && !windows.some((window) => window.name === to)) {
    windows.push({ id: "", name: to, active: false, auto: false, paneId: "", sessionId: "", sessionName: "", path: "" });
  }
  const message = await deliver(context, addresses, body, fields);
  // A reply to their own mail acknowledges it (and marks it read), as an agent's reply does.
  if (original.mailbox === name) await acknowledgeMail(context.store, name, [original.message.id], message.id);
  return message;
}

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
