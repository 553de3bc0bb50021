/**
 * The tools `agentmail mcp` offers, as data: a name, a description written for the model that reads the tool list,
 * an input schema, and a handler on top of the same actions the CLI uses. Results are the CLI's --json documents;
 * receive and wait add more_unread, which the CLI says on stderr (a tool result has no stderr a model reads).
 */
import { z } from "zod";
import { storeAt, whoIsCalling } from "../identity/caller.ts";
import type { Invocation } from "../identity/invocation.ts";
import { addressBook, RECIPIENTS_ARGUMENTS } from "../identity/recipients.ts";
import { CLAIM_ARGUMENTS, claimPaths, listClaims, releasePaths } from "../actions/claims.ts";
import { checkReason, DEFAULT_TTL_MS, MAX_TTL_MS } from "../claims/claims.ts";
import { noteCounted, RECEIVE_ARGUMENTS, receiveMail, unreadWaiting, type ReceiveOptions } from "../actions/receive.ts";
import { inbox, readOne, thread, VIEW_ARGUMENTS } from "../actions/mailbox-view.ts";
import { reply, REPLY_ARGUMENTS } from "../actions/reply.ts";
import { acknowledge, copyStates, FOLLOW_ARGUMENTS, sent, type StoredCopies } from "../actions/follow.ts";
import { MAX_MAIL_TTL_MS, SEND_ARGUMENTS, sendMailAndFollow, type SendWait } from "../actions/send.ts";
import { getStatus, parseAvailability, setStatus, STATUS_ARGUMENTS } from "../actions/status.ts";
import { returnedNotices, type ReturnedMail } from "../mail/bounce.ts";
import { AgentmailError } from "../mail/errors.ts";
import {
  FIELD_ARGUMENTS,
  FILTER_ARGUMENTS,
  mailFilter,
  MESSAGE_TYPES,
  PRIORITIES,
  SENDABLE_TYPES,
  type MailFieldInput,
} from "../mail/fields.ts";
import type { Message } from "../mail/message.ts";
import { AVAILABILITIES, DEFAULT_WAIT_SECONDS, MAX_WAIT_SECONDS } from "../mail/agents.ts";

export interface ToolContext {
  /** Where the call runs: identity and store come from it, exactly as for the CLI. */
  invocation: Invocation;
  /** Aborted when the client cancels the call or disconnects. */
  signal: AbortSignal;
  onSkip: ReceiveOptions["onSkip"];
  /** Tells the client a long call is still alive (a progress notification), when the client asked for progress. */
  heartbeat?: (message: string) => Promise<void>;
  /** How often the heartbeat beats during a wait. */
  heartbeatMs?: number;
  /** Says what the CLI says on stderr beside its document (mail returned instead of shown): a text block after the result. */
  note?(text: string): void;
}

export interface ToolAnnotations {
  readOnlyHint: boolean;
  destructiveHint: boolean;
  idempotentHint: boolean;
  openWorldHint: boolean;
}

export interface ToolDefinition<Shape extends Record<string, z.ZodType> = Record<string, z.ZodType>> {
  name: string;
  title: string;
  description: string;
  /** Each argument's schema; its description is what the model reads in tools/list and in an error about it. */
  inputSchema: Shape;
  annotations: ToolAnnotations;
  /** Runs with the arguments the schema read (server.ts parses them first): their types are the schema's. */
  run(args: z.infer<z.ZodObject<Shape>>, context: ToolContext): Promise<unknown>;
}

/**
 * A tool whose run takes its arguments as its own schema types them (a misspelt name or a wrong type fails to
 * compile), kept in the one list of every tool: the server hands each run what that tool's schema parsed.
 */
export const defineTool = <Shape extends Record<string, z.ZodType>>(definition: ToolDefinition<Shape>): ToolDefinition =>
  definition as unknown as ToolDefinition;

/** Often enough for clients that reset a 60-second timeout on progress. */
export const HEARTBEAT_MS = 15_000;

function statusDocument(name: string, status: { status: string; since: string; updated_at: string } | null): object {
  return status ? { name, status: status.status, since: status.since, updated_at: status.updated_at } : { name, status: null };
}

/** A message as receive and wait return it: with how many more are unread, so a model knows to receive again. */
type Received = Message & { more_unread: number };

/**
 * A message is marked read only after the reply carrying it has been written. The tool hands the message over and
 * returns; the SDK writes the reply in the microtasks that follow (our transport writes synchronously), and the
 * store marks the message read on the next turn of the event loop, after that write. A reply that could not be
 * written closes the transport, which aborts this call's signal: the message then stays unread, as it does when
 * the server is killed before its reply is out. A call cancelled before the hand-over leaves it unread too.
 */
async function takeMessage(context: ToolContext, waitMs: number | undefined): Promise<Received | null> {
  const { store, caller, confirm } = await whoIsCalling(context.invocation, "receive");
  let more = 0;
  // Mail whose time to live ran out, returned to its sender instead of shown: said beside the result, as the CLI does.
  const returned: ReturnedMail[] = [];
  const sayReturned = () => {
    if (returned.length > 0) context.note?.(returnedNotices(returned.splice(0)));
  };
  return new Promise<Received | null>((resolve, reject) => {
    const handOver = async (message: Message) => {
      if (context.signal.aborted) {
        throw new AgentmailError("io", "the call was cancelled before the message could be returned; it stays unread");
      }
      // Counted before the reply is out, while this message is still unread in the store: hence the one taken off.
      more = Math.max(0, (await unreadWaiting(store, caller.name)) - 1);
      sayReturned();
      resolve({ ...message, more_unread: more });
      return resultWritten(context, "the reply could not be written; the message stays unread");
    };
    const onReturned = (each: ReturnedMail) => void returned.push(each);
    receiveMail(store, caller.name, handOver, { onSkip: context.onSkip, waitMs, signal: context.signal, confirm, onReturned }).then(
      async (message) => {
        if (!message) {
          sayReturned();
          resolve(null);
        }
        // Once the take is over (the record is written under the lock it held): the rest were counted to the agent.
        else if (more > 0) await noteCounted(store, caller.name, message.id);
      },
      reject,
    );
  });
}

/**
 * After a message was handed over in a tool's result: settles on the next turn of the event loop, after the SDK wrote
 * that result, and fails (the message stays unread, `unwritten` says so) when the call was aborted meanwhile.
 */
function resultWritten(context: ToolContext, unwritten: string): Promise<void> {
  return new Promise<void>((written, failed) =>
    setImmediate(() => {
      if (context.signal.aborted) failed(new AgentmailError("io", unwritten));
      else written();
    }),
  );
}

async function withHeartbeat<T>(context: ToolContext, work: Promise<T>, what = "still waiting for mail"): Promise<T> {
  if (!context.heartbeat) return work;
  const beat = context.heartbeat;
  const timer = setInterval(() => void beat(what).catch(() => {}), context.heartbeatMs ?? HEARTBEAT_MS);
  try {
    return await work;
  } finally {
    clearInterval(timer);
  }
}

const mutating: ToolAnnotations = { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false };

const readOnly: ToolAnnotations = { ...mutating, readOnlyHint: true, idempotentHint: true };

const fieldSchema = {
  subject: z.string().optional().describe(FIELD_ARGUMENTS.subject),
  type: z.enum(SENDABLE_TYPES).optional().describe(FIELD_ARGUMENTS.type),
  priority: z.enum(PRIORITIES).optional().describe(FIELD_ARGUMENTS.priority),
  tags: z.array(z.string()).optional().describe(`${FIELD_ARGUMENTS.tag}; an array of them`),
  needs_response: z.boolean().optional().describe(FIELD_ARGUMENTS.needsResponse),
};

function fieldInput(args: z.infer<z.ZodObject<typeof fieldSchema>>): MailFieldInput {
  return { subject: args.subject, type: args.type, priority: args.priority, tags: args.tags, needsResponse: args.needs_response === true };
}

/** One path or glob, or an array of them (`what` is what they are). */
const pathsOf = (what: string) =>
  z
    .union([z.string(), z.array(z.string())])
    .optional()
    .describe(`${what}; one, or an array`);

const listOf = (value: string | string[] | undefined): string[] => (value === undefined ? [] : typeof value === "string" ? [value] : value);

export const TOOLS: readonly ToolDefinition[] = [
  defineTool({
    name: "send",
    title: "Send mail to other agents",
    description:
      "Send a message to other agents (a window name from list-recipients, name@project, a,b,c, @all, @GROUP, role:ROLE, a " +
      'bridge address, or an array of these), stored durably and delivered once; returns {"id"}, plus "warnings" when a name was chosen by tmux.',
    inputSchema: {
      recipient: z.union([z.string(), z.array(z.string()).min(1)]).describe(`${SEND_ARGUMENTS.recipient}; or an array of these`),
      message: z.string().describe(SEND_ARGUMENTS.message),
      ...fieldSchema,
      ttl_seconds: z
        .number()
        .min(1)
        .max(MAX_MAIL_TTL_MS / 1000)
        .optional()
        .describe(`${SEND_ARGUMENTS.ttl}, in seconds`),
      wait_for: z.enum(["read", "reply", "ack"]).optional().describe(SEND_ARGUMENTS.waitFor),
      timeout_seconds: z
        .number()
        .min(0)
        .max(MAX_WAIT_SECONDS)
        .optional()
        .describe(`${SEND_ARGUMENTS.timeout}, in seconds (default ${DEFAULT_WAIT_SECONDS})`),
    },
    annotations: mutating,
    async run(args, context) {
      const warnings: string[] = [];
      const said = () => (warnings.length > 0 ? { warnings } : {});
      const what = args.wait_for;
      const ttlMs = args.ttl_seconds === undefined ? undefined : Math.round(args.ttl_seconds * 1000);
      // Stored, framed at once where the mailman verified a route (bounded; the mailman retries what this leaves), waited on.
      const send = (wait?: SendWait) =>
        sendMailAndFollow(context.invocation, args.recipient, args.message, fieldInput(args), {
          warn: (warning) => void warnings.push(warning),
          ttlMs,
          wait,
        });
      if (what === undefined) {
        const { message, copies } = await send();
        if (copies === null) return { id: message.id, ...said() };
        return { id: message.id, copies: await copyStates(copies, message.id, message), ...said() };
      }
      const timeoutMs = (args.timeout_seconds ?? DEFAULT_WAIT_SECONDS) * 1000;
      // A reply is handed over like a received message (see takeMessage): returned at once, and marked read only
      // after the tool's result carrying it was written; a call cancelled first leaves it unread.
      const waited = new Promise<object>((resolve, reject) => {
        const showReply = async (reply: Message, id: string, copies: StoredCopies) => {
          if (context.signal.aborted)
            throw new AgentmailError("io", "the call was cancelled before the reply could be returned; it stays unread");
          resolve({ id, wait_for: what, reached: true, copies: await copyStates(copies, id), reply, ...said() });
          return resultWritten(context, "the tool's reply could not be written; the reply stays unread");
        };
        send({ what, timeoutMs, signal: context.signal, showReply }).then(({ message, waited }) => {
          if (waited === null) resolve({ id: message.id, ...said() });
          else if (waited.reply === null) resolve({ id: message.id, wait_for: what, ...waited, ...said() });
        }, reject);
      });
      return withHeartbeat(context, waited, `still waiting for ${what}`);
    },
  }),
  defineTool({
    name: "sent",
    title: "Follow the mail you sent",
    description:
      "List the mail you sent, newest first, each copy with its delivery state: stored (or held back: held, unreachable), notified (via which channel), read, acknowledged " +
      "or bounced (why), and when; unread keeps what is not read yet, undelivered what bounced.",
    inputSchema: {
      unread: z.boolean().optional().describe(FOLLOW_ARGUMENTS.unread),
      undelivered: z.boolean().optional().describe(FOLLOW_ARGUMENTS.undelivered),
    },
    annotations: readOnly,
    async run(args, context) {
      const agent = await whoIsCalling(context.invocation, "mail");
      const filter = args.undelivered === true ? "undelivered" : args.unread === true ? "unread" : "all";
      const here = await sent(agent.store, agent.caller.name, filter);
      // Copies sent into other projects' stores, as the CLI's sent lists them (name@project).
      if (agent.projects.elsewhere.length === 0) return here;
      const { allSent, sentElsewhere } = await import("../actions/send-elsewhere.ts");
      return allSent(here, await sentElsewhere(agent, filter, true));
    },
  }),
  defineTool({
    name: "ack",
    title: "Acknowledge messages",
    description:
      'Acknowledge messages of yours by id once you have dealt with them (marked read too): their senders see acknowledged; returns {"acknowledged"}.',
    inputSchema: { ids: z.union([z.string(), z.array(z.string()).min(1)]).describe(`${FOLLOW_ARGUMENTS.ids}: one, or an array`) },
    annotations: mutating,
    async run(args, context) {
      const { store, caller } = await whoIsCalling(context.invocation, "mail");
      return { acknowledged: await acknowledge(store, caller.name, listOf(args.ids)) };
    },
  }),
  defineTool({
    name: "receive",
    title: "Receive your oldest unread mail",
    description:
      'Take your oldest unread message and mark it read: the message as JSON ("from" is whom to answer; ' +
      '"more_unread" counts the messages still unread: call receive again while it is above 0), or null when nothing is unread.',
    inputSchema: {},
    annotations: mutating,
    async run(_args, context) {
      return takeMessage(context, undefined);
    },
  }),
  defineTool({
    name: "wait",
    title: "Wait for mail",
    description:
      "Like receive, but when nothing is unread, block until a message arrives (returned at once) " + "or timeout_seconds pass (null).",
    inputSchema: {
      timeout_seconds: z
        .number()
        .min(0)
        .max(MAX_WAIT_SECONDS)
        .optional()
        .describe(`${RECEIVE_ARGUMENTS.wait}, in seconds (0 to ${MAX_WAIT_SECONDS}; default ${DEFAULT_WAIT_SECONDS})`),
    },
    annotations: mutating,
    async run(args, context) {
      const seconds = args.timeout_seconds ?? DEFAULT_WAIT_SECONDS;
      return withHeartbeat(context, takeMessage(context, seconds * 1000));
    },
  }),
  defineTool({
    name: "status",
    title: "Set or read your availability",
    description: "Set your availability (ready: remind me of mail, work: do not interrupt, offline: gone), or leave status out to read it.",
    inputSchema: {
      status: z.enum(AVAILABILITIES).optional().describe(STATUS_ARGUMENTS.status),
    },
    annotations: mutating,
    async run(args, context) {
      const wanted = args.status;
      if (wanted === undefined) {
        const { name, status } = await getStatus(context.invocation);
        return statusDocument(name, status);
      }
      const record = await setStatus(context.invocation, parseAvailability(wanted));
      return statusDocument(record.name, record);
    },
  }),
  defineTool({
    name: "list-recipients",
    title: "List who you can send to",
    description:
      'List whom you can send to: this project\'s windows of your session ({"name", "you", "auto", "status", "last_seen"}; auto ' +
      'means tmux chose the name), with all also other projects\' agents ("name": "NAME@PROJECT"), then groups ' +
      '({"name": "@GROUP", "members"}) and roles ({"name": "role:ROLE", "members"}).',
    inputSchema: {
      all: z.boolean().optional().describe(RECIPIENTS_ARGUMENTS.all),
    },
    annotations: readOnly,
    async run(args, context) {
      return addressBook(await whoIsCalling(context.invocation, "mail"), args.all === true);
    },
  }),
  defineTool({
    name: "reply",
    title: "Reply to a message",
    description:
      'Reply to a message of yours by id: to its sender, in its thread, "Re:" its subject, ' +
      'type response unless you set one; returns {"id"}.',
    inputSchema: {
      id: z.string().describe(REPLY_ARGUMENTS.id),
      message: z.string().describe(REPLY_ARGUMENTS.message),
      ...fieldSchema,
    },
    annotations: mutating,
    async run(args, context) {
      const { message, warnings } = await reply(context.invocation, args.id, args.message, fieldInput(args));
      return warnings.length > 0 ? { id: message.id, warnings } : { id: message.id };
    },
  }),
  defineTool({
    name: "inbox",
    title: "List your mail",
    description:
      "List your unread mail, oldest first, without marking it read; " + "all adds read mail, archived lists the archive, the rest filter.",
    inputSchema: {
      all: z.boolean().optional().describe(VIEW_ARGUMENTS.all),
      archived: z.boolean().optional().describe(VIEW_ARGUMENTS.archived),
      from: z.string().optional().describe(FILTER_ARGUMENTS.from),
      type: z.enum(MESSAGE_TYPES).optional().describe(FILTER_ARGUMENTS.type),
      priority: z.enum(PRIORITIES).optional().describe(FILTER_ARGUMENTS.priority),
      tag: z.string().optional().describe(FILTER_ARGUMENTS.tag),
      thread: z.string().optional().describe(FILTER_ARGUMENTS.thread),
    },
    annotations: readOnly,
    async run(args, context) {
      const { store, caller } = await whoIsCalling(context.invocation, "mail");
      const filter = mailFilter({
        from: args.from,
        type: args.type,
        priority: args.priority,
        tag: args.tag,
        thread: args.thread,
      });
      return inbox(store, caller.name, { all: args.all === true, archived: args.archived === true, filter });
    },
  }),
  defineTool({
    name: "read",
    title: "Read one message by id",
    description: "Return one of your messages (live or archived) by id and mark it read, as receive would.",
    inputSchema: { id: z.string().describe(VIEW_ARGUMENTS.id) },
    annotations: mutating,
    async run(args, context) {
      const { store, caller } = await whoIsCalling(context.invocation, "mail");
      return readOne(store, caller.name, args.id, () => {
        if (context.signal.aborted) {
          throw new AgentmailError("io", "the call was cancelled before the message could be returned; it stays unread");
        }
      });
    },
  }),
  defineTool({
    name: "thread",
    title: "Show a whole thread",
    description: "Return every message of the thread a message id belongs to, from every mailbox, oldest first, marking nothing.",
    inputSchema: { id: z.string().describe(VIEW_ARGUMENTS.threadId) },
    annotations: readOnly,
    async run(args, context) {
      return thread(await storeAt(context.invocation), args.id);
    },
  }),
  defineTool({
    name: "claim",
    title: "Claim files so other agents do not edit them",
    description:
      "Claim paths of the repository for yourself before editing them (exclusive unless shared, for ttl_seconds, default " +
      `${DEFAULT_TTL_MS / 1000}), refused with the holder's name when another agent holds one unless wait_seconds waits for it, ` +
      'or with renew give your claims more time; returns {"holder", "claims"}.',
    inputSchema: {
      paths: pathsOf(CLAIM_ARGUMENTS.paths),
      shared: z.boolean().optional().describe(CLAIM_ARGUMENTS.shared),
      reason: z.string().optional().describe(CLAIM_ARGUMENTS.reason),
      ttl_seconds: z
        .number()
        .min(1)
        .max(MAX_TTL_MS / 1000)
        .optional()
        .describe(`${CLAIM_ARGUMENTS.ttl}, in seconds (default ${DEFAULT_TTL_MS / 1000})`),
      wait_seconds: z
        .number()
        .min(0)
        .max(MAX_WAIT_SECONDS)
        .optional()
        .describe(`${CLAIM_ARGUMENTS.wait}, in seconds (0 to ${MAX_WAIT_SECONDS})`),
      renew: z.boolean().optional().describe(CLAIM_ARGUMENTS.renew),
    },
    annotations: mutating,
    async run(args, context) {
      const waitSeconds = args.wait_seconds;
      const ttlSeconds = args.ttl_seconds;
      const work = claimPaths(context.invocation, {
        paths: listOf(args.paths),
        shared: args.shared === true,
        reason: args.reason === undefined ? undefined : checkReason(args.reason),
        ttlMs: ttlSeconds === undefined ? DEFAULT_TTL_MS : Math.round(ttlSeconds * 1000),
        waitMs: waitSeconds === undefined ? undefined : waitSeconds * 1000,
        renew: args.renew === true,
        signal: context.signal,
      });
      const result = await (waitSeconds ? withHeartbeat(context, work, "still waiting for the claim") : work);
      return { holder: result.holder, claims: result.claims, ...(result.warnings.length > 0 ? { warnings: result.warnings } : {}) };
    },
  }),
  defineTool({
    name: "release",
    title: "Release your claims",
    description:
      'Release your claims on paths (all of them when paths is left out) once you are done, and whoever waited is told; returns {"released"}.',
    inputSchema: { paths: pathsOf(CLAIM_ARGUMENTS.released) },
    annotations: mutating,
    async run(args, context) {
      const result = await releasePaths(context.invocation, listOf(args.paths));
      return { holder: result.holder, released: result.released, ...(result.warnings.length > 0 ? { warnings: result.warnings } : {}) };
    },
  }),
  defineTool({
    name: "claims",
    title: "List who claims which files",
    description:
      'List the claims on paths of this repository, yours or everyone\'s: path, holder, shared, reason, expires_at and state ("live", or "ended" with why).',
    inputSchema: { mine: z.boolean().optional().describe(CLAIM_ARGUMENTS.mine) },
    annotations: readOnly,
    async run(args, context) {
      return (await listClaims(context.invocation, args.mine === true)).claims;
    },
  }),
];
