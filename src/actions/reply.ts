import { senderAddress } from "../mail/addresses.ts";
import { mailFields, replyFields, type MailFieldInput } from "../mail/fields.ts";
import { describeBody, validateBody, type Message } from "../mail/message.ts";
import { whoIsCalling } from "../identity/caller.ts";
import type { Invocation } from "../identity/invocation.ts";
import { ownMessage } from "./mailbox-view.ts";
import { isBridgeAddress } from "../bridges/address.ts";
import { acknowledge } from "./follow.ts";
import { deliver } from "./send.ts";

/** What each argument of a reply means, for `reply --help` and the reply tool's schema (its fields: FIELD_ARGUMENTS). */
export const REPLY_ARGUMENTS = {
  id: "The id of the message you answer",
  message: describeBody("The reply"),
} as const;

export interface Reply {
  message: Message;
  /** The replied-to message was unread and could not be marked read (the reply itself was sent). */
  markFailed: Error | null;
  /** What the sender should know that did not stop the reply (a Claude team's lead that does not poll its inbox). */
  warnings: string[];
}

/**
 * Replies to one of the caller's messages: to its sender, in its thread, `Re:` its subject, type `response` unless
 * the caller chose one. The reply is stored first; then the original, if unread, is marked read. A failure to mark
 * does not undo the reply, whose id must still be shown.
 */
export async function reply(invocation: Invocation, id: string, body: string, input: MailFieldInput): Promise<Reply> {
  validateBody(body);
  const own = mailFields(input);
  const agent = await whoIsCalling(invocation, "mail");
  const original = await ownMessage(agent.store, agent.caller.name, id);
  const fields = replyFields(original.message, own, input.type !== undefined);
  const to = original.message.from;
  // Mail imported from a peer goes back through the same bridge (a FEAT-124 reply names the source file it answers).
  const warnings: string[] = [];
  const warn = (warning: string) => void warnings.push(warning);
  const message = isBridgeAddress(to)
    ? await (await import("../bridges/send.ts")).sendViaBridge(invocation, to, body, fields, original.message, warn)
    : await deliver(agent, [senderAddress(to)], body, fields);
  // A reply acknowledges what it answers (its sender's `sent` says so), and marks it read.
  let markFailed: Error | null = null;
  try {
    await acknowledge(agent.store, agent.caller.name, [id], message.id);
  } catch (error) {
    markFailed = error as Error;
  }
  return { message, markFailed, warnings };
}
