import { AgentmailError } from "../core/errors.ts";
import { here } from "../actions/context.ts";
import { sendMail } from "../actions/send.ts";
import { printJson, writeStdout } from "../output/streams.ts";
import { defineCommand, stringArg } from "./command.ts";
import { bodyOrStdin, FIELD_ARGS, fieldInput } from "./mail-flags.ts";

export default defineCommand({
  meta: { name: "send", description: "Send a message to the agent in another window of this tmux session" },
  args: {
    to: { type: "positional", valueHint: "recipient", description: "Window name of the recipient" },
    body: { type: "positional", valueHint: "message", description: "The message; read from stdin when left out and stdin is not a terminal" },
    recipient: { type: "string", alias: "r", valueHint: "name", description: "The recipient (instead of the first argument)" },
    message: { type: "string", alias: "m", valueHint: "text", description: "The message (instead of the second argument)" },
    ...FIELD_ARGS,
  },
  examples: [
    "agentmail send reviewer \"PR #12 is ready\"",
    "git diff --stat | agentmail send reviewer",
    "agentmail send -r reviewer -m \"-x is broken\"",
    "agentmail send reviewer -s \"Build is red\" -t alert -p urgent --tag ci \"main fails since 4f2a\"",
  ],
  async run({ args, json }) {
    // Positionals fill the slots no flag filled, in order; a flag wins over a positional (the positional is ignored).
    const positionals = [stringArg(args, "to"), stringArg(args, "body")].filter((value) => value !== undefined);
    const recipient = stringArg(args, "recipient") ?? positionals.shift();
    if (recipient === undefined) throw new AgentmailError("usage", "missing recipient; usage: agentmail send <recipient> <message>");
    const body = await bodyOrStdin(stringArg(args, "message") ?? positionals.shift(), "agentmail send <recipient> <message>");
    const message = await sendMail(here(), recipient, body, fieldInput(args));
    if (json) printJson({ id: message.id });
    else writeStdout(message.id + "\n");
  },
});
