/** How `send --wait-for` reads its flags and says what it waited for, reached or not (the wait is actions/send.ts's). */
import { copyStates, type CopyState, type StoredCopies, type WaitFor, type WaitOutcome } from "../actions/follow.ts";
import type { Sent, SendWait } from "../actions/send.ts";
import type { Message } from "../mail/message.ts";
import { output, type Output } from "../cli/definitions.ts";
import { EXIT_NOT_REACHED, usageError } from "../mail/errors.ts";
import { formatMessage, receipt } from "../mail/format.ts";
import { displayName } from "../mail/names.ts";

const WAITS: readonly WaitFor[] = ["read", "reply", "ack"];

/**
 * `--wait-for` and `--timeout` (seconds), one of them given, as the send action takes them, and what the command
 * prints once the wait is over: a reply as it comes (inside the take), else where the copies got to.
 */
export function sendWait(
  waitFor: string | undefined,
  timeout: number | undefined,
  print: (printed: Output) => Promise<void>,
): { wait: SendWait; said(sent: Sent): Output | undefined } {
  if (waitFor === undefined) {
    throw usageError("--timeout goes with --wait-for; usage: agentmail send <recipient> <message> --wait-for reply --timeout 300");
  }
  if (!(WAITS as readonly string[]).includes(waitFor)) {
    throw usageError(`--wait-for takes read, reply or ack, not '${displayName(waitFor)}'`);
  }
  const what = waitFor as WaitFor;
  const timeoutMs = timeout === undefined ? null : timeout * 1000;
  return {
    wait: { what, timeoutMs, showReply: (reply, id, copies) => showReply(reply, id, copies, print) },
    said: ({ message, waited }) => (waited === null || waited.reply !== null ? undefined : waitOutput(message.id, what, timeoutMs, waited)),
  };
}

const copyLines = (copies: readonly CopyState[]) =>
  copies.map((copy) => `to ${displayName(copy.mailbox)}  ${receipt(copy.delivery)}\n`).join("");

const wanted = (what: WaitFor) => (what === "read" ? "read" : what === "ack" ? "acknowledged" : "a reply");

/** The document and the text once the wait is over (a reply was printed as it came: see the send command). */
function waitOutput(id: string, what: WaitFor, timeoutMs: number | null, outcome: WaitOutcome): Output {
  const document = { id, wait_for: what, reached: outcome.reached, copies: outcome.copies, reply: outcome.reply };
  if (outcome.reached) return output(document, () => copyLines(outcome.copies));
  const where = outcome.copies.map((copy) => `${displayName(copy.mailbox)} ${receipt(copy.delivery)}`).join(", ");
  const bounced = outcome.copies.some((copy) => copy.delivery.state === "bounced");
  const why = bounced
    ? `${id} bounced before it reached ${wanted(what)}`
    : `${id} did not reach ${wanted(what)} within ${timeoutMs === null ? "the wait" : `${timeoutMs / 1000} s`}`;
  const next = bounced
    ? "the bounce is in your mailbox (agentmail receive)"
    : "'agentmail sent' follows it, and a reply comes to your mailbox";
  return output(document, () => copyLines(outcome.copies), {
    exitCode: EXIT_NOT_REACHED,
    async afterText() {
      const { log } = await import("../output/log.ts");
      log.error(`${why}; where it is: ${where}; ${next}`);
    },
  });
}

/**
 * A reply that came while waiting, printed as it comes, inside the take, so it is marked read only once it is out
 * (as receive): the receive format, or with --json the one document, reply in it.
 */
async function showReply(reply: Message, id: string, copies: StoredCopies, print: (printed: Output) => Promise<void>): Promise<void> {
  const document = { id, wait_for: "reply", reached: true, copies: await copyStates(copies, id), reply };
  await print(output(document, () => formatMessage(reply)));
}
