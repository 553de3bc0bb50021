import { AgentmailError } from "../core/errors.ts";
import { MAX_MESSAGE_BYTES, tooLarge } from "../core/message.ts";
import { here } from "../actions/context.ts";
import { sendMail } from "../actions/send.ts";
import { readStdin, stdinIsPiped } from "../input/stdin.ts";
import { printJson, writeStdout } from "../output/streams.ts";
import { defineCommand, stringArg, stringsArg } from "./command.ts";

/**
 * One byte more than the limit may be read: the trailing newline that is dropped. So readStdin's refusal would name
 * that number; the message must name the real limit.
 */
export function readMessageFromStdin(fd = 0): string {
  try {
    return readStdin(MAX_MESSAGE_BYTES + 1, fd).replace(/\n$/, "");
  } catch (error) {
    if (error instanceof AgentmailError && error.code === "message_too_large") throw tooLarge("the message on stdin is");
    throw error;
  }
}

export default defineCommand({
  meta: { name: "send", description: "Send a message to other agents: a window name, a,b,c, @all, @GROUP or role:ROLE" },
  args: {
    to: {
      type: "positional",
      valueHint: "recipient",
      description: "Who gets it: a window name, several as a,b,c, @all, @GROUP or role:ROLE",
    },
    body: { type: "positional", valueHint: "message", description: "The message; read from stdin when left out and stdin is not a terminal" },
    recipient: {
      type: "string",
      alias: "r",
      multiple: true,
      valueHint: "address",
      description: "A recipient (instead of the first argument); repeat for more",
    },
    message: { type: "string", alias: "m", valueHint: "text", description: "The message (instead of the second argument)" },
  },
  examples: [
    "agentmail send reviewer \"PR #12 is ready\"",
    "agentmail send alice,bob \"standup in 5\"",
    "agentmail send -r alice -r bob -m \"-x is broken\"",
    "agentmail send @all \"main is green again\"",
    "agentmail send role:triage \"new bug: #34\"",
    "git diff --stat | agentmail send reviewer",
  ],
  async run({ args, json }) {
    // Positionals fill the slots no flag filled, in order; a flag wins over a positional (the positional is ignored).
    const positionals = [stringArg(args, "to"), stringArg(args, "body")].filter((value) => value !== undefined);
    const flagged = stringsArg(args, "recipient");
    const recipients = flagged.length > 0 ? flagged : positionals.splice(0, 1);
    if (recipients.length === 0) throw new AgentmailError("usage", "missing recipient; usage: agentmail send <recipient> <message>");
    let body = stringArg(args, "message") ?? positionals.shift();
    if (body === undefined) {
      if (!(await stdinIsPiped())) throw new AgentmailError("usage", "missing message; usage: agentmail send <recipient> <message>, or pipe the message on stdin");
      body = readMessageFromStdin();
    }
    const warnings: string[] = [];
    const message = await sendMail(here(), recipients, body, { warn: (warning) => void warnings.push(warning) });
    if (json) printJson({ id: message.id });
    else writeStdout(message.id + "\n");
    if (warnings.length > 0) {
      // consola is loaded only when there is something to say.
      const { log } = await import("../output/log.ts");
      for (const warning of warnings) log.warn(warning);
    }
  },
});
