import { AgentmailError } from "../core/errors.ts";
import { mailFields, type MailFieldInput, type MailFields } from "../core/mail-fields.ts";
import { createMessage, validateBody, type Message } from "../core/message.ts";
import { displayName } from "../core/names.ts";
import { closestNames } from "../core/suggest.ts";
import { appendMessage } from "../store/mailbox.ts";
import { ensureRoot } from "../store/paths.ts";
import { recipientsOf, whoAmI, type Agent, type Place } from "./context.ts";

function unknownRecipient(recipient: string, known: string[]): AgentmailError {
  const closest = closestNames(recipient, known);
  const hint = closest.length > 0 ? `did you mean ${closest.map((name) => `"${displayName(name)}"`).join(", ")}? ` : "";
  return new AgentmailError("unknown_recipient", `no window named "${displayName(recipient)}" in this tmux session; ${hint}run 'agentmail recipients' to list them`);
}

/** Validates, stores durably, and returns the stored message: once this returns, its id may be shown. */
export async function sendMail(place: Place, recipient: string, body: string, input: MailFieldInput = {}): Promise<Message> {
  validateBody(body);
  const fields = mailFields(input);
  return deliver(await whoAmI(place), recipient, body, fields);
}

/** Stores a message whose body and fields are already checked, once the recipient is known to be a window. */
export async function deliver(agent: Agent, recipient: string, body: string, fields: MailFields): Promise<Message> {
  const known = recipientsOf(agent).map((entry) => entry.name);
  if (!known.includes(recipient)) throw unknownRecipient(recipient, known);
  const message = createMessage(agent.caller.name, recipient, body, new Date(), fields);
  await appendMessage(ensureRoot(agent.root), message);
  return message;
}
