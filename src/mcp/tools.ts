/**
 * The tools `agentmail mcp` offers, as data: a name, a description written for the model that reads the tool list,
 * an input schema, and a handler on top of the same actions the CLI uses. Results are the CLI's --json documents.
 */
import { z } from "zod";
import { addressBook } from "../actions/address-book.ts";
import { whoAmI, whoReceives, type Place } from "../actions/context.ts";
import { receiveMail } from "../actions/receive.ts";
import { sendMail } from "../actions/send.ts";
import { getStatus, parseAvailability, setStatus } from "../actions/status.ts";
import { AgentmailError } from "../core/errors.ts";
import { MAX_MESSAGE_BYTES, type Message } from "../core/message.ts";
import { DEFAULT_WAIT_SECONDS, MAX_WAIT_SECONDS } from "../core/mcp-wait.ts";
import type { SkipReporter } from "../store/mailbox.ts";
import { AVAILABILITIES, type AgentStatus } from "../store/status.ts";


export interface ToolContext {
  /** Where the call runs: identity and store come from it, exactly as for the CLI. */
  place: Place;
  /** Aborted when the client cancels the call or disconnects. */
  signal: AbortSignal;
  onSkip: SkipReporter;
  /** Tells the client a long call is still alive (a progress notification), when the client asked for progress. */
  heartbeat?: (message: string) => Promise<void>;
  /** How often the heartbeat beats during a wait. */
  heartbeatMs?: number;
}

export interface ToolAnnotations {
  readOnlyHint: boolean;
  destructiveHint: boolean;
  idempotentHint: boolean;
  openWorldHint: boolean;
}

export interface ToolDefinition {
  name: string;
  title: string;
  description: string;
  /** Each argument's schema; its description is what the model reads in tools/list and in an error about it. */
  inputSchema: Record<string, z.ZodType>;
  annotations: ToolAnnotations;
  run(args: Record<string, unknown>, context: ToolContext): Promise<unknown>;
}

/** Often enough for clients that reset a 60-second timeout on progress. */
export const HEARTBEAT_MS = 15_000;

function statusDocument(name: string, status: AgentStatus | null): object {
  return status ? { name, status: status.status, since: status.since, updated_at: status.updated_at } : { name, status: null };
}

/**
 * A message is marked read only once it is handed over; if the call was cancelled meanwhile, `show` throws and the
 * message goes back unread, so a cancelled wait never swallows mail.
 */
async function takeMessage(context: ToolContext, waitMs: number | undefined): Promise<Message | null> {
  const { root, caller } = await whoReceives(context.place);
  const show = () => {
    if (context.signal.aborted) throw new AgentmailError("io", "the call was cancelled before the message could be returned; it stays unread");
  };
  return receiveMail(root, caller.name, show, { onSkip: context.onSkip, waitMs, signal: context.signal });
}

async function withHeartbeat<T>(context: ToolContext, work: Promise<T>): Promise<T> {
  if (!context.heartbeat) return work;
  const beat = context.heartbeat;
  const timer = setInterval(() => void beat("still waiting for mail").catch(() => {}), context.heartbeatMs ?? HEARTBEAT_MS);
  try {
    return await work;
  } finally {
    clearInterval(timer);
  }
}

const mutating: ToolAnnotations = { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false };

export const TOOLS: readonly ToolDefinition[] = [
  {
    name: "send",
    title: "Send mail to other agents",
    description:
      "Send a message to other agents working in this tmux session. recipient is an address, or an array of them: the name of " +
      'an agent\'s tmux window ("bob"), several at once ("alice,bob"), "@all" (every other agent window of the session), ' +
      '"@GROUP" (every member of a group) or "role:ROLE" (one message that exactly one member of the role takes). ' +
      "Call list-recipients to see the names, groups and roles. The message is stored durably before this returns (one id, " +
      "a copy for each recipient; you never get your own) and is delivered exactly once, oldest first, when the recipient " +
      `calls receive or wait. At most ${MAX_MESSAGE_BYTES.toLocaleString("en")} bytes of UTF-8; for anything longer, ` +
      'write it to a file and send the path. Returns {"id": "<8-character message id>"}, and "warnings" when a recipient\'s ' +
      "name was chosen by tmux and will change.",
    inputSchema: {
      recipient: z
        .union([z.string(), z.array(z.string()).min(1)])
        .describe("Who gets it: a window name as list-recipients shows it, a,b,c, @all, @GROUP or role:ROLE; or an array of these"),
      message: z.string().describe("The message text; plain text or Markdown"),
    },
    annotations: mutating,
    async run(args, context) {
      const warnings: string[] = [];
      const recipient = args.recipient as string | string[];
      const message = await sendMail(context.place, recipient, args.message as string, { warn: (warning) => void warnings.push(warning) });
      return warnings.length > 0 ? { id: message.id, warnings } : { id: message.id };
    },
  },
  {
    name: "receive",
    title: "Receive your oldest unread mail",
    description:
      "Take your oldest unread message and mark it read. Returns the message as JSON " +
      '({"id", "from", "to", "message", "read_flag", "created_at"}; "from" is the sender\'s window name, to reply, send to it), ' +
      "or null when nothing is unread. Each message is returned once: call again for the next one. " +
      "To block until mail arrives, use wait instead.",
    inputSchema: {},
    annotations: mutating,
    async run(_args, context) {
      return takeMessage(context, undefined);
    },
  },
  {
    name: "wait",
    title: "Wait for mail",
    description:
      "Like receive, but when nothing is unread, block until a message arrives or timeout_seconds pass. Returns the message " +
      "(same JSON as receive), or null when the time ran out. Use it when you are waiting for a reply and have nothing " +
      "else to do; a message that arrives during the wait is returned at once.",
    inputSchema: {
      timeout_seconds: z
        .number()
        .min(0)
        .max(MAX_WAIT_SECONDS)
        .optional()
        .describe(`How long to wait at most, in seconds (0 to ${MAX_WAIT_SECONDS}; default ${DEFAULT_WAIT_SECONDS})`),
    },
    annotations: mutating,
    async run(args, context) {
      const seconds = (args.timeout_seconds as number | undefined) ?? DEFAULT_WAIT_SECONDS;
      return withHeartbeat(context, takeMessage(context, seconds * 1000));
    },
  },
  {
    name: "status",
    title: "Set or read your availability",
    description:
      "Set or read your availability, which tells the mailman whether to remind you of unread mail: ready (idle, remind me), " +
      "work (busy, do not interrupt), offline (gone). Give status to set it; leave it out to read it. Hooks usually set it " +
      'for you. Returns {"name", "status", "since", "updated_at"}; status is null when it was never set.',
    inputSchema: {
      status: z.enum(AVAILABILITIES).optional().describe("The availability to set; leave out to read the current one"),
    },
    annotations: mutating,
    async run(args, context) {
      const wanted = args.status as string | undefined;
      if (wanted === undefined) {
        const { name, status } = await getStatus(context.place);
        return statusDocument(name, status);
      }
      const record = await setStatus(context.place, parseAvailability(wanted));
      return statusDocument(record.name, record);
    },
  },
  {
    name: "list-recipients",
    title: "List who you can send to",
    description:
      "List whom you can send mail to: the windows of your tmux session, then the groups and roles. A window entry is " +
      '{"name", "you", "auto"}: "you" marks your own, "auto" a name tmux chose, which changes with the program in that window ' +
      '(agentmail name pins one). A group is {"name": "@GROUP", "members"}, a role {"name": "role:ROLE", "members"}: send ' +
      'to that name. "@all" (every other agent window) is not listed.',
    inputSchema: {},
    annotations: { ...mutating, readOnlyHint: true, idempotentHint: true },
    async run(_args, context) {
      return addressBook(await whoAmI(context.place));
    },
  },
];
