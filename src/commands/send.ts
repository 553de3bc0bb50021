import { defineCommand } from "../cli/definitions.ts";
import { AgentmailError } from "../core/errors.ts";
import { displayName } from "../core/names.ts";
import { unquotedRecipient } from "../core/suggest.ts";
import { here, recipientsOf, whoAmI } from "../actions/context.ts";
import { sendMail } from "../actions/send.ts";
import { surplusArgument } from "../cli/errors.ts";
import { printJson, writeStdout } from "../output/streams.ts";
import { bodyOrStdin, FIELD_ARGS, fieldInput } from "./mail-flags.ts";

/** A third word means something went unquoted: the recipient when leading words name a window, else the message. */
async function surplusWords(words: string[]): Promise<AgentmailError> {
  let recipients: string[] = [];
  try {
    recipients = recipientsOf(await whoAmI(here())).map((entry) => entry.name);
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
    description: "Send a message to the agent in another window of this tmux session",
    examples: [
      'agentmail send reviewer "PR #12 is ready"',
      "git diff --stat | agentmail send reviewer",
      'agentmail send -r reviewer -m "-x is broken"',
      'agentmail send reviewer -s "Build is red" -t alert -p urgent --tag ci "main fails since 4f2a"',
    ],
    checksSurplusArguments: true,
  },
  args: {
    to: { type: "positional", required: false, valueHint: "recipient", description: "Window name of the recipient" },
    body: {
      type: "positional",
      required: false,
      valueHint: "message",
      description: "The message; read from stdin when left out and stdin is not a terminal",
    },
    recipient: { type: "string", alias: "r", valueHint: "name", description: "The recipient (instead of the first argument)" },
    message: { type: "string", alias: "m", valueHint: "text", description: "The message (instead of the second argument)" },
    ...FIELD_ARGS,
  },
  async run({ args }) {
    if (args._.length > 2) throw await surplusWords(args._);
    // Positionals fill the slots no flag filled, in order; a flag wins over a positional (the positional is ignored).
    const positionals = [args.to, args.body].filter((value) => value !== undefined);
    const recipient = args.recipient ?? positionals.shift();
    if (recipient === undefined) throw new AgentmailError("usage", "missing recipient; usage: agentmail send <recipient> <message>");
    const body = await bodyOrStdin(args.message ?? positionals.shift(), "agentmail send <recipient> <message>");
    const message = await sendMail(here(), recipient, body, fieldInput(args));
    if (args.json === true) printJson({ id: message.id });
    else writeStdout(message.id + "\n");
  },
});
