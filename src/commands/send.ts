import { defineCommand, output } from "../cli/definitions.ts";
import { AgentmailError } from "../mail/errors.ts";
import { displayName } from "../mail/names.ts";
import { unquotedRecipient } from "../mail/suggest.ts";
import { whoIsCalling } from "../identity/caller.ts";
import { currentInvocation } from "../identity/invocation.ts";
import { recipientsOf } from "../identity/recipients.ts";
import { MAX_MAIL_TTL_MS, SEND_ARGUMENTS, sendMailAndFollow } from "../actions/send.ts";
import { surplusArgument } from "../cli/errors.ts";
import { bodyArgs, bodyOrStdin, FIELD_ARGS, fieldInput } from "./_mail-flags.ts";

/** A third word means something went unquoted: the recipient when leading words name a window, else the message. */
async function surplusWords(words: string[]): Promise<AgentmailError> {
  let recipients: string[] = [];
  try {
    recipients = recipientsOf(await whoIsCalling(currentInvocation(), "mail")).map((entry) => entry.name);
  } catch {
    // Outside tmux or a repository the windows are unknown: the message is the likelier culprit.
  }
  const recipient = unquotedRecipient(words, recipients);
  if (recipient === null) return surplusArgument(words[2]!, "agentmail send", "quote a message that has spaces");
  const name = displayName(recipient);
  return surplusArgument(words[2]!, "agentmail send", `a window is named "${name}"; did you mean to quote "${name}"?`);
}

export default defineCommand({
  meta: {
    name: "send",
    description: "Send a message to other agents: a window name, name@project, a,b,c, @all, @GROUP, role:ROLE, or a bridge address",
    examples: [
      'agentmail send reviewer "PR #12 is ready"',
      'agentmail send alice,bob "standup in 5"',
      'agentmail send -r alice -r bob -m "-x is broken"',
      'agentmail send @all "main is green again"',
      'agentmail send role:triage "new bug: #34"',
      "git diff --stat | agentmail send reviewer",
      'agentmail send reviewer -s "Build is red" -t alert -p urgent --tag ci "main fails since 4f2a"',
    ],
    checksSurplusArguments: true,
  },
  args: {
    to: {
      type: "positional",
      required: false,
      valueHint: "recipient",
      description: SEND_ARGUMENTS.recipient,
    },
    recipient: {
      type: "string",
      alias: "r",
      multiple: true,
      valueHint: "address",
      description: "A recipient (instead of the first argument); repeat for more",
    },
    ...bodyArgs(SEND_ARGUMENTS.message, "The message"),
    ...FIELD_ARGS,
    ttl: {
      type: "string",
      valueHint: "duration",
      description: `${SEND_ARGUMENTS.ttl}: 90s, 30m, 2h, 1d`,
    },
    "wait-for": {
      type: "string",
      valueHint: "state",
      description: SEND_ARGUMENTS.waitFor,
    },
    timeout: { type: "string", unit: "seconds", valueHint: "seconds", description: `${SEND_ARGUMENTS.timeout} (exit 3)` },
  },
  async run({ args, print }) {
    if (args._.length > 2) throw await surplusWords(args._);
    // Positionals fill the slots no flag filled, in order; a flag wins over a positional (the positional is ignored).
    const positionals: string[] = [];
    for (const value of [args.to, args.body]) if (value !== undefined) positionals.push(value);
    const recipients = args.recipient.length > 0 ? args.recipient : positionals.splice(0, 1);
    if (recipients.length === 0) throw new AgentmailError("usage", "missing recipient; usage: agentmail send <recipient> <message>");
    const { ttl, "wait-for": waitFor, timeout } = args;
    const ttlMs = ttl === undefined ? undefined : (await import("../mail/durations.ts")).parseDuration(ttl, "--ttl", MAX_MAIL_TTL_MS);
    // Loaded only for a wait, as is what follows the copies.
    const waiting =
      waitFor === undefined && timeout === undefined ? undefined : (await import("./_wait-for.ts")).sendWait(waitFor, timeout, print);
    const body = await bodyOrStdin(args.message ?? positionals.shift(), "agentmail send <recipient> <message>");
    const warnings: string[] = [];
    const sayWarnings = async () => {
      if (warnings.length === 0) return;
      // consola is loaded only when there is something to say.
      const { log } = await import("../output/log.ts");
      for (const warning of warnings) log.warn(warning);
    };
    const sent = await sendMailAndFollow(currentInvocation(), recipients, body, fieldInput(args), {
      warn: (warning) => void warnings.push(warning),
      ttlMs,
      // The id is printed as soon as it is the sender's, before the copies are delivered: with --json as the one
      // document, unless a wait follows (then text only: the document comes at the end).
      stored: (message) =>
        print(
          waiting
            ? { json: () => undefined, text: () => message.id + "\n", after: sayWarnings }
            : output({ id: message.id }, message.id + "\n", { after: sayWarnings }),
        ),
      wait: waiting?.wait,
    });
    // Said at the end: what the wait came to, unless a reply came (printed as it came).
    return waiting?.said(sent);
  },
});
