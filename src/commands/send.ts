import { AgentmailError } from "../core/errors.ts";
import { MAX_MESSAGE_BYTES, tooLarge } from "../core/message.ts";
import { here } from "../actions/context.ts";
import { sendMail } from "../actions/send.ts";
import { readStdin, stdinIsPiped } from "../input/stdin.ts";
import { printJson, writeStdout } from "../output/streams.ts";
import { defineCommand, stringArg } from "./command.ts";

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
  meta: { name: "send", description: "Send a message to the agent in another window of this tmux session" },
  args: {
    to: { type: "positional", valueHint: "recipient", description: "Window name of the recipient" },
    body: { type: "positional", valueHint: "message", description: "The message; read from stdin when left out and stdin is not a terminal" },
    recipient: { type: "string", alias: "r", valueHint: "name", description: "The recipient (instead of the first argument)" },
    message: { type: "string", alias: "m", valueHint: "text", description: "The message (instead of the second argument)" },
  },
  examples: ["agentmail send reviewer \"PR #12 is ready\"", "git diff --stat | agentmail send reviewer", "agentmail send -r reviewer -m \"-x is broken\""],
  async run({ args, json }) {
    // Positionals fill the slots no flag filled, in order; a flag wins over a positional (the positional is ignored).
    const positionals = [stringArg(args, "to"), stringArg(args, "body")].filter((value) => value !== undefined);
    const recipient = stringArg(args, "recipient") ?? positionals.shift();
    if (recipient === undefined) throw new AgentmailError("usage", "missing recipient; usage: agentmail send <recipient> <message>");
    let body = stringArg(args, "message") ?? positionals.shift();
    if (body === undefined) {
      if (!(await stdinIsPiped())) throw new AgentmailError("usage", "missing message; usage: agentmail send <recipient> <message>, or pipe the message on stdin");
      body = readMessageFromStdin();
    }
    const message = await sendMail(here(), recipient, body);
    if (json) printJson({ id: message.id });
    else writeStdout(message.id + "\n");
  },
});
