/**
 * Send: from addresses to stored copies, then delivered, then followed. The contract both interfaces (the CLI's
 * `send` and `reply`, the MCP send and reply tools) rely on:
 *
 *   checked   every address and the body are checked before anything is written: one unknown name (a typo gets a
 *             did-you-mean) means nothing is stored (mail/copy-plan.ts plans the copies)
 *   durable   each copy (one per agent, one per role queue, each in its store, another project's included) is
 *             appended and fsynced under its mailbox's lock before sendMail returns; all copies share one id. Once it
 *             returns, the id may be shown: every printed id is stored. A failure after some copies names who has the
 *             message and who not, so it can be sent again to the rest only
 *   at once   a send's copies, once stored, are framed through their agent CLI's channel where the mailman verified
 *             a route (mailman/at-once.ts), or a mailman is brought up; this never fails the send (the mailman retries)
 *   followed  a send may then wait until every copy is read or acknowledged, or a reply comes (actions/follow.ts)
 *
 * sendMailAndFollow is that whole sequence, written once; each interface only says what it means in its own terms.
 */
import { isRoleAddress, parseAddresses, roleAddress, type Address } from "../mail/addresses.ts";
import { planCopies, type CopyPlan, type Window } from "../mail/copy-plan.ts";
import { AgentmailError, toAgentmailError, usageError } from "../mail/errors.ts";
import { mailFields, type MailFieldInput, type MailFields } from "../mail/fields.ts";
import { createMessage, describeBody, validateBody, type Message } from "../mail/message.ts";
import { SENDER_STORE } from "../mail/bounce.ts";
import { displayName } from "../mail/names.ts";
import { PERSON_PANE } from "../store/store.ts";
import { isBridgeAddress } from "../bridges/address.ts";
import { storeKeepingNameClaims } from "../store/open.ts";
import { findRepository } from "../store/paths.ts";
import { readRoutes } from "../store/local/routes-file.ts";
import type { Store } from "../store/store.ts";
import { type CallerContext, requireOneWindowNamed, whoIsCalling } from "../identity/caller.ts";
import type { Invocation } from "../identity/invocation.ts";
import { namedInEnvironment, trustedName } from "../identity/name-claims.ts";
import { addressableWindows, claimedRecipients } from "../identity/recipients.ts";
import type { StoredCopies, WaitFor, WaitOutcome } from "./follow.ts";
import type { RemoteCopy } from "./send-elsewhere.ts";

export interface SendOptions {
  /** Hears what the sender should know but that does not stop the send (a name tmux chose, windows @all left out). */
  warn?: (warning: string) => void;
  /** The message's time to live: unread after it, it goes back to its sender (dead-letters/dead-letters.ts). */
  ttlMs?: number;
  /** The sender waits for the message (`send --wait-for`): a bridge address, which cannot be followed, refuses it. */
  waits?: boolean;
  /**
   * Hears where the copies were stored once all are: the store, the sender's name there, each mailbox (what
   * `deliverNow` and `--wait-for` take).
   */
  stored?: (copies: StoredCopies) => void;
}

/** The longest time to live a message may be given. */
export const MAX_MAIL_TTL_MS = 30 * 86_400_000;

/**
 * What each argument of a send means, worded once for `send --help` and the send tool's schema. Each interface adds
 * only how it is given: a repeated flag or an array, a duration's forms or seconds, its default.
 */
export const SEND_ARGUMENTS = {
  recipient:
    "Who gets it: a window name (as the recipient list shows it), name@project (another project's agent), several as " +
    "a,b,c, @all, @GROUP, role:ROLE, or a bridge address: feat124:NAME, roo:SLUG, dmail:NAME, claude-team:TEAM/MEMBER",
  message: describeBody("The message"),
  ttl: "Return it to you as a bounce unless read within this long, at most 30 days",
  waitFor: "Block until every copy is read, or acknowledged (ack), or a reply comes (shown, and marked read, as receive does)",
  timeout: "How long the wait lasts at most; a wait that ends first says where each copy got to",
} as const;

/**
 * Validates, stores durably, and returns the stored message (the first copy): once this returns, its id may be
 * shown. `recipients` holds addresses (a window name, `a,b,c`, `@all`, `@GROUP`, `role:ROLE`, or one bridge address
 * `feat124:`/`roo:`/`dmail:`/`claude-team:`), one or several. Every address is checked before anything is written. The copies (one
 * per agent, one per role queue, all with the same id) are appended one mailbox after the other, each fsynced: a
 * send killed between two appends leaves the copies already written and prints no id; a failure between two
 * appends names who has the message and who not.
 */
export async function sendMail(
  invocation: Invocation,
  recipients: string | readonly string[],
  body: string,
  input: MailFieldInput = {},
  options: SendOptions = {},
): Promise<Message> {
  const list = typeof recipients === "string" ? [recipients] : recipients;
  // Bridge addresses load the bridge code only when used: a plain send never pays for it.
  if (list.length === 1 && isBridgeAddress(list[0]!)) {
    if (options.ttlMs !== undefined || options.waits === true) {
      throw usageError("a bridge address takes neither a time to live nor a wait; send without --ttl and --wait-for");
    }
    return (await import("../bridges/send.ts")).sendFieldsViaBridge(invocation, list[0]!, body, input, options.warn);
  }
  validateBody(body);
  const fields = mailFields(input);
  const addresses = parseAddresses(list);
  return (
    (await deliverAsClaimed(invocation, addresses, body, fields, options)) ??
    deliver(await whoIsCalling(invocation, "mail"), addresses, body, fields, options)
  );
}

/**
 * The send that needs no tmux call (see identity/name-claims.ts), or null: the caller holds its AGENTMAIL_NAME claim from this
 * pane, and every address is an agent that holds a claim on this tmux server (and that `.agentmailignore` does not
 * hide). Everything else asks tmux.
 */
async function deliverAsClaimed(
  invocation: Invocation,
  addresses: readonly Address[],
  body: string,
  fields: MailFields,
  options: SendOptions,
): Promise<Message | null> {
  const located = namedInEnvironment(invocation.env) === null ? null : storeKeepingNameClaims(invocation);
  if (located === null) return null;
  const { store, claims, workTree } = located;
  const sender = trustedName(claims, invocation.env);
  if (sender === null) return null;
  const claimed = claimedRecipients(claims, workTree, addresses, invocation.env, sender);
  if (claimed.length !== addresses.length) return null;
  const windows = [{ name: sender, you: true, auto: false }, ...claimed];
  const plan = planCopies(addresses, { caller: sender, windows, groups: () => new Map(), roles: () => new Map() });
  return storeCopies(store, sender, plan, body, fields, options);
}

/**
 * Stores a message whose body and fields are already checked (see sendMail): `reply` comes here directly, with its
 * recipient as an agent address, since a window name is not to be read as address syntax.
 */
export async function deliver(
  context: CallerContext,
  addresses: readonly Address[],
  body: string,
  fields: MailFields,
  options: SendOptions = {},
): Promise<Message> {
  const { plan, remote } = await resolveRecipients(context, addresses, options.warn);
  return storeCopies(context.store, context.caller.name, plan, body, fields, options, remote);
}

/**
 * The mailboxes `addresses` reach from the caller, as a send resolves them (a send stores copies in exactly these),
 * and the copies for other projects' agents; refused as the send would be, nothing stored. What the sender should
 * know goes to `warn`.
 */
export async function resolveRecipients(
  context: CallerContext,
  addresses: readonly Address[],
  warn?: (warning: string) => void,
): Promise<{ plan: CopyPlan; remote: RemoteCopy[] }> {
  const { store, caller } = context;
  // A claimed name is its claimant's alone, wherever its window is now: no window check for it (see identity/name-claims.ts).
  const claimed = claimedRecipients(context.claims, context.workTree, addresses, context.env, caller.name);
  // Read only when an address needs them: a list file that does not parse fails only the sends that use it.
  const wants = (kind: Address["kind"]) => {
    for (const address of addresses) if (address.kind === kind) return true;
    return false;
  };
  const groups = wants("group") ? await store.memberships("groups") : new Map<string, string[]>();
  const roles = wants("role") ? await store.memberships("roles") : new Map<string, string[]>();
  const windows = [...(await addressableWindows(context)), ...claimed];
  // Other projects' agents (identity/projects.ts) are looked for only when an address is not this project's.
  const routed = allLocal(addresses, windows)
    ? { local: addresses, remote: [], warnings: [] }
    : await (await import("./send-elsewhere.ts")).route(context, addresses, windows);
  for (const warning of routed.warnings) warn?.(warning);
  if (routed.local.length === 0) return { plan: { agents: [], roles: [], warnings: [] }, remote: routed.remote };
  const book = {
    caller: caller.name,
    windows,
    groups: () => groups,
    roles: () => roles,
  };
  let plan: CopyPlan;
  try {
    plan = planCopies(routed.local, book);
  } catch (error) {
    // A name no window has may be a person's (watch and web register them): looked up only then, off the usual path.
    const people = await peopleIn(store, error);
    if (people.length === 0) throw error;
    plan = planCopies(routed.local, { ...book, windows: [...book.windows, ...people] });
  }
  const claimedNames = new Set<string>();
  for (const window of claimed) claimedNames.add(window.name);
  for (const name of plan.agents) if (!claimedNames.has(name)) requireOneWindowNamed(caller, name);
  return { plan, remote: routed.remote };
}

/** Whether every address is this project's to resolve (no routing needed): no `@project`, every name a window's here. */
function allLocal(addresses: readonly Address[], windows: readonly Window[]): boolean {
  for (const address of addresses) {
    if (address.kind !== "agent") continue;
    if (address.project !== undefined) return false;
    let found = false;
    for (const window of windows) if (window.name === address.name) found = true;
    if (!found) return false;
  }
  return true;
}

/** The people the registry knows (PERSON_PANE, store/file/status.ts), as addressable windows, when `error` is an unknown recipient. */
async function peopleIn(store: Store, error: unknown): Promise<Window[]> {
  if (!(error instanceof AgentmailError) || error.code !== "unknown_recipient") return [];
  const people: Window[] = [];
  for (const entry of await store.statuses()) if (entry.pane === PERSON_PANE) people.push({ name: entry.name, you: false, auto: false });
  return people;
}

/** Appends the copies a plan names (see sendMail) and returns the first. */
async function storeCopies(
  store: Store,
  sender: string,
  plan: CopyPlan,
  body: string,
  fields: MailFields,
  options: SendOptions,
  remote: readonly RemoteCopy[] = [],
): Promise<Message> {
  const now = new Date();
  const timed = options.ttlMs === undefined ? fields : { ...fields, expires_at: new Date(now.getTime() + options.ttlMs).toISOString() };
  const addressees = [...plan.agents];
  for (const role of plan.roles) addressees.push(roleAddress(role));
  // One id for every copy, in this store and others; each copy names its mailbox, and another project's its sender there.
  const copies: { store: Store; message: Message; shown: string }[] = [];
  const first = createMessage(sender, addressees[0] ?? remote[0]!.name, body, now, timed);
  for (const to of addressees) copies.push({ store, message: { ...first, to }, shown: to });
  for (const copy of remote) {
    const message = { ...first, from: copy.sender, to: copy.name, [SENDER_STORE]: copy.senderStore };
    copies.push({ store: copy.store, message, shown: copy.shown });
  }
  for (let index = 0; index < copies.length; index++) {
    try {
      await copies[index]!.store.append(copies[index]!.message, { freshId: true });
    } catch (error) {
      if (index === 0) throw error;
      const shown = (part: typeof copies) => part.map((copy) => copy.shown);
      throw partlySent(first.id, shown(copies.slice(0, index)), shown(copies.slice(index)), error);
    }
  }
  for (const warning of plan.warnings) options.warn?.(warning);
  const elsewhere: StoredCopies["elsewhere"] = [];
  for (const copy of remote) elsewhere.push({ store: copy.store, mailbox: copy.name, shown: copy.shown });
  options.stored?.({ store, sender, mailboxes: addressees, elsewhere });
  return copies[0]!.message;
}

/**
 * After a send has printed its id: frames the copies at once along the routes the mailman verified (lazy: the
 * delivery code loads only when a recipient has one; bounded: mailman/at-once.ts). With no route known and no mailman
 * running, brings one up when a recipient's window holds an agent CLI with a channel (mailman/bring-up.ts), which
 * frames the copies. Never fails the send.
 */
async function deliverNow(invocation: Invocation, { store, sender, mailboxes }: StoredCopies, message: Message): Promise<void> {
  try {
    // Agents' copies in this store (role queues wait for a member's sweep; another project's mailman frames its own).
    const copies: Message[] = [];
    for (const to of mailboxes) if (!isRoleAddress(to)) copies.push({ ...message, from: sender, to });
    const root = store.localRoot();
    const routes = readRoutes(root);
    let routed = false;
    for (const copy of copies) if (copy.to in routes) routed = true;
    if (!routed) return await bringUpFor(root, invocation, sender, copies);
    const { deliverAtOnce } = await import("../mailman/at-once.ts");
    await deliverAtOnce(store, root, copies, routes, invocation.env);
  } catch {
    // The mailman delivers it.
  }
}

/**
 * No route known: the mailman, when none runs, agentmail's hooks are installed for Claude Code or Codex CLI, and a
 * recipient's window holds such an agent CLI (one tmux call, only then).
 */
async function bringUpFor(root: string, invocation: Invocation, sender: string, copies: readonly Message[]): Promise<void> {
  if (copies.length === 0 || !invocation.env.TMUX) return;
  // Each step loads only what it needs: most sends stop at the first (a mailman runs) or the second (no such hooks).
  const { mailmanWanted } = await import("../mailman/files.ts");
  if (!mailmanWanted(root)) return;
  const { channelHooksInstalled } = await import("../hooks/installed.ts");
  const projectRoot = findRepository(invocation.cwd, invocation.env)?.workTree ?? invocation.cwd;
  if (!channelHooksInstalled(invocation.env, projectRoot)) return;
  const { agentCliAmong, bringUpMailman } = await import("../mailman/bring-up.ts");
  const names = new Set<string>();
  for (const copy of copies) names.add(copy.to);
  if (!(await agentCliAmong(names, invocation.env))) return;
  bringUpMailman(root, invocation.env, { how: "send", agent: sender, pane: invocation.env.TMUX_PANE ?? "?" });
}

/** What a send waits for once its copies are stored and delivered (`send --wait-for`, the send tool's `wait_for`). */
export interface SendWait {
  what: WaitFor;
  /** How long at most; null: no limit. */
  timeoutMs: number | null;
  /** Ends the wait early (a cancelled tool call). */
  signal?: AbortSignal;
  /**
   * A reply to message `id` that came while waiting, handed over as a take hands a message to its reader: it is
   * marked read only once this returns (a throw leaves it unread), so an interface shows it here, before it goes.
   */
  showReply(reply: Message, id: string, copies: StoredCopies): void | Promise<void>;
}

export interface SendRequest {
  /** Hears what the sender should know but that does not stop the send (see SendOptions). */
  warn?: (warning: string) => void;
  /** The message's time to live. */
  ttlMs?: number;
  /** The message is stored: its id is the sender's now, shown before the copies are delivered and the wait begins. */
  stored?: (message: Message) => void | Promise<void>;
  wait?: SendWait;
}

export interface Sent {
  /** The stored message (its first copy). */
  message: Message;
  /** Where its copies are; null for a send through a bridge, which cannot be followed. */
  copies: StoredCopies | null;
  /** How the wait ended, when one was asked (null otherwise). */
  waited: WaitOutcome | null;
}

/**
 * A send as both interfaces make it, written once: the message stored (sendMail; `request.stored` hears it), then its
 * copies delivered at once where a route is known (deliverNow, which never fails the send), then the wait asked for.
 * The CLI's `send` prints the id when it is stored and formats the rest; the send tool returns it all at the end.
 */
export async function sendMailAndFollow(
  invocation: Invocation,
  recipients: string | readonly string[],
  body: string,
  input: MailFieldInput,
  request: SendRequest = {},
): Promise<Sent> {
  let copies: StoredCopies | null = null;
  const { wait } = request;
  const message = await sendMail(invocation, recipients, body, input, {
    warn: request.warn,
    ttlMs: request.ttlMs,
    waits: wait !== undefined,
    stored: (stored) => void (copies = stored),
  });
  await request.stored?.(message);
  const stored = copies as StoredCopies | null;
  if (stored === null) return { message, copies: null, waited: null };
  await deliverNow(invocation, stored, message);
  if (wait === undefined) return { message, copies: stored, waited: null };
  // Loaded only for a wait: a plain send never reads the copies' states.
  const { waitFor } = await import("./follow.ts");
  const waited = await waitFor(
    stored,
    message.id,
    wait.what,
    wait.timeoutMs,
    (reply) => wait.showReply(reply, message.id, stored),
    wait.signal,
  );
  return { message, copies: stored, waited };
}

/** A failure after some copies were stored: who has the message, who not, and how to finish without duplicates. */
function partlySent(id: string, stored: string[], missing: string[], cause: unknown): AgentmailError {
  const error = toAgentmailError(cause);
  const names = (list: string[]) => list.map(displayName).join(",");
  const reason = `message ${id} was stored for ${names(stored)} but not for ${names(missing)}: ${error.message}`;
  return new AgentmailError(error.code, `${reason}; once that is fixed, send it again to ${names(missing)} only`, error.exitCode);
}
