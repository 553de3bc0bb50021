/** The flags `send` and `reply` share: the rich fields of a message, and where the body comes from. */

import { AgentmailError } from "../mail/errors.ts";
import { FIELD_ARGUMENTS, PRIORITIES, SENDABLE_TYPES, type MailFieldInput } from "../mail/fields.ts";
import { MAX_MESSAGE_BYTES, tooLarge } from "../mail/message.ts";
import { readStdin, stdinIsPiped } from "../input/stdin.ts";
import type { ArgSpecs, ParsedArgs } from "../cli/args.ts";

export const FIELD_ARGS = {
  subject: { type: "string", alias: "s", valueHint: "text", description: FIELD_ARGUMENTS.subject },
  type: { type: "string", alias: "t", valueHint: "type", description: `${FIELD_ARGUMENTS.type}; one of ${SENDABLE_TYPES.join(", ")}` },
  priority: { type: "string", alias: "p", valueHint: "level", description: `${FIELD_ARGUMENTS.priority}; one of ${PRIORITIES.join(", ")}` },
  tag: { type: "string", multiple: true, valueHint: "tag", description: `${FIELD_ARGUMENTS.tag}; repeat for several` },
  "needs-response": { type: "boolean", description: FIELD_ARGUMENTS.needsResponse },
} as const satisfies ArgSpecs;

/**
 * Where the body is given: the positional after the recipient or id, or -m. `about` is what it is (the action's
 * description, shared with the tool's schema), `what` names it ("The reply").
 */
export const bodyArgs = (about: string, what: string) =>
  ({
    body: {
      type: "positional",
      required: false,
      valueHint: "message",
      description: `${about}; read from stdin when left out and stdin is not a terminal`,
    },
    message: { type: "string", alias: "m", valueHint: "text", description: `${what} (instead of the second argument)` },
  }) as const satisfies ArgSpecs;

export function fieldInput(args: ParsedArgs<typeof FIELD_ARGS>): MailFieldInput {
  return { subject: args.subject, type: args.type, priority: args.priority, tags: args.tag, needsResponse: args["needs-response"] };
}

/** The body: given (by -m or a positional), else stdin when it is piped; `usage` says how to give it. */
export async function bodyOrStdin(given: string | undefined, usage: string): Promise<string> {
  if (given !== undefined) return given;
  if (!(await stdinIsPiped())) throw new AgentmailError("usage", `missing message; usage: ${usage}, or pipe the message on stdin`);
  return readMessageFromStdin();
}

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
