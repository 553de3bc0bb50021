import { errorWithNextStep, type AgentmailError } from "../core/errors.ts";
import { mailFields, type MailFieldInput, type MailFields } from "../core/mail-fields.ts";
import { createMessage, validateBody, type Message } from "../core/message.ts";
import { displayName } from "../core/names.ts";
import { closestNames } from "../core/suggest.ts";
import { appendMessage } from "../store/mailbox.ts";
import { ensureRoot } from "../store/paths.ts";
import { isBridgeAddress } from "../bridges/address.ts";
import { recipientsOf, requireOneWindowNamed, whoAmI, type Agent, type Place, type Recipient } from "./context.ts";

/**
 * An unknown recipient, with the closest names worth suggesting: never the caller itself (writing to yourself is
 * rarely what a typo meant) and never a blank name (which reads as no suggestion at all).
 */
export function unknownRecipient(recipient: string, recipients: Recipient[]): AgentmailError {
  const candidates = recipients.filter((entry) => !entry.you && entry.name.trim() !== "").map((entry) => entry.name);
  const closest = closestNames(recipient, candidates);
  const hint = closest.length > 0 ? `; did you mean ${closest.map((name) => `"${displayName(name)}"`).join(", ")}?` : "";
  const reason = `no window named "${displayName(recipient)}" in this tmux session${hint}`;
  return errorWithNextStep("unknown_recipient", reason, "listRecipients");
}

/** Validates, stores durably, and returns the stored message: once this returns, its id may be shown. */
export async function sendMail(place: Place, recipient: string, body: string, input: MailFieldInput = {}): Promise<Message> {
  // Bridge addresses (feat124:, roo:, dmail:) load the bridge code only when used: a plain send never pays for it.
  if (isBridgeAddress(recipient)) return (await import("../bridges/send.ts")).sendFieldsViaBridge(place, recipient, body, input);
  validateBody(body);
  const fields = mailFields(input);
  return deliver(await whoAmI(place), recipient, body, fields);
}

/** Stores a message whose body and fields are already checked, once the recipient is known to be one window. */
export async function deliver(agent: Agent, recipient: string, body: string, fields: MailFields): Promise<Message> {
  const recipients = recipientsOf(agent);
  if (!recipients.some((entry) => entry.name === recipient)) throw unknownRecipient(recipient, recipients);
  requireOneWindowNamed(agent.caller, recipient);
  const message = createMessage(agent.caller.name, recipient, body, new Date(), fields);
  await appendMessage(ensureRoot(agent.root), message);
  return message;
}
