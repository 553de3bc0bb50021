import { AgentmailError } from "../core/errors.ts";
import { createMessage, validateBody, type Message } from "../core/message.ts";
import { displayName } from "../core/names.ts";
import { closestNames } from "../core/suggest.ts";
import { appendMessage } from "../store/mailbox.ts";
import { ensureRoot } from "../store/paths.ts";
import { isBridgeAddress } from "../bridges/address.ts";
import { recipientsOf, whoAmI, type Place } from "./context.ts";

function unknownRecipient(recipient: string, known: string[]): AgentmailError {
  const closest = closestNames(recipient, known);
  const hint = closest.length > 0 ? `did you mean ${closest.map((name) => `"${displayName(name)}"`).join(", ")}? ` : "";
  return new AgentmailError("unknown_recipient", `no window named "${displayName(recipient)}" in this tmux session; ${hint}run 'agentmail recipients' to list them`);
}

/** Validates, stores durably, and returns the stored message: once this returns, its id may be shown. */
export async function sendMail(place: Place, recipient: string, body: string): Promise<Message> {
  // Bridge addresses (feat124:, roo:, dmail:) load the bridge code only when used: a plain send never pays for it.
  if (isBridgeAddress(recipient)) return (await import("../bridges/send.ts")).sendViaBridge(place, recipient, body);
  validateBody(body);
  const agent = await whoAmI(place);
  const { root, caller } = agent;
  const known = recipientsOf(agent).map((entry) => entry.name);
  if (!known.includes(recipient)) throw unknownRecipient(recipient, known);
  const message = createMessage(caller.name, recipient, body);
  await appendMessage(ensureRoot(root), message);
  return message;
}
