/**
 * A send on the Redis store (Store.append): one script call (APPEND in scripts.ts) stores the message in its
 * mailbox's stream, indexes it for its sender and rings the bells, or refuses a namespace whose mail moved.
 */
import { AgentmailError } from "../../mail/errors.ts";
import { movesOf, type Message } from "../../mail/message.ts";
import { MailServerUnreachable } from "../server.ts";
import { ReplicasBehind } from "./connection.ts";
import type { Keyspace } from "./keyspace.ts";
import { APPEND } from "./scripts.ts";

export async function append(space: Keyspace, message: Message): Promise<void> {
  const mailbox = message.to;
  const keys = space.keys(mailbox);
  const sent = space.sentKey(message.from);
  // The stored record is the message as sent; its read state lives beside it (read_flag false here, no read_at).
  const { read_at: readAt, ...rest } = message;
  const read = message.read_flag === true ? (typeof readAt === "string" && readAt ? readAt : new Date().toISOString()) : "";
  const appended = space.runChecked(
    APPEND,
    [
      keys.mail,
      keys.read,
      keys.ids,
      keys.bell,
      keys.archids,
      sent ?? space.key("sent:"),
      space.key("unread"),
      space.key("bell"),
      keys.arch,
      keys.lease,
    ],
    [
      mailbox,
      message.id,
      JSON.stringify({ ...rest, read_flag: false }),
      read,
      sent ? "1" : "0",
      String(movesOf(message)),
      new Date().toISOString(),
    ],
  );
  await appended.catch((error: unknown) => {
    throw uncertainSend(message.id, error);
  });
}

/**
 * A send whose outcome is not known: the connection broke after the message went out (and trying again did not get
 * through), or the primary stored it but too few replicas acknowledged it. The message may be delivered, so the
 * error says so, names its id, and says to look before sending again (a second send would be a second message).
 */
function uncertainSend(id: string, error: unknown): unknown {
  if (error instanceof ReplicasBehind)
    return new AgentmailError("io", `message ${id} may still be delivered: ${error.message}`, undefined, "checkSent");
  if (error instanceof MailServerUnreachable && error.maybeDone) {
    return new AgentmailError("io", `message ${id} may have been stored: ${error.message}`, undefined, "checkSent");
  }
  return error;
}
