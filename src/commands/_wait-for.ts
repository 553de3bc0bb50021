/** How `send --wait-for` reads its flags and says what it waited for, reached or not. */
import { copyStates, waitFor, type CopyState, type StoredCopies, type WaitFor, type WaitOutcome } from "../actions/follow.ts";
import type { Message } from "../mail/message.ts";
import { output, type Output } from "../cli/definitions.ts";
import { EXIT_NOT_REACHED, usageError } from "../mail/errors.ts";
import { formatMessage, receipt } from "../mail/format.ts";
import { displayName } from "../mail/names.ts";

const WAITS: readonly WaitFor[] = ["read", "reply", "ack"];

/** `--wait-for` and `--timeout` (seconds) as given: what to wait for (undefined: no wait) and how long at most (null: no limit). */
export function waitArgs(
  waitFor: string | undefined,
  timeout: number | undefined,
): { what: WaitFor; timeoutMs: number | null } | undefined {
  if (waitFor === undefined) {
    if (timeout !== undefined)
      throw usageError("--timeout goes with --wait-for; usage: agentmail send <recipient> <message> --wait-for reply --timeout 300");
    return undefined;
  }
  if (!(WAITS as readonly string[]).includes(waitFor)) {
    throw usageError(`--wait-for takes read, reply or ack, not '${displayName(waitFor)}'`);
  }
  return { what: waitFor as WaitFor, timeoutMs: timeout === undefined ? null : timeout * 1000 };
}

const copyLines = (copies: readonly CopyState[]) =>
  copies.map((copy) => `to ${displayName(copy.mailbox)}  ${receipt(copy.delivery)}\n`).join("");

const wanted = (what: WaitFor) => (what === "read" ? "read" : what === "ack" ? "acknowledged" : "a reply");

/** The document and the text once the wait is over (a reply was printed as it came: see the send command). */
export function waitOutput(id: string, what: WaitFor, timeoutMs: number | null, outcome: WaitOutcome): Output {
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
 * Waits as asked and returns what to print at the end. A reply is printed as it comes, inside the take, so it is
 * marked read only once it is out (as receive): the receive format, or with --json the one document, reply in it.
 */
export async function waitAndSay(
  copies: StoredCopies,
  id: string,
  wait: { what: WaitFor; timeoutMs: number | null },
  print: (printed: Output) => Promise<void>,
): Promise<Output | undefined> {
  const showReply = async (reply: Message) => {
    const document = { id, wait_for: "reply", reached: true, copies: await copyStates(copies, id), reply };
    await print(output(document, () => formatMessage(reply)));
  };
  const outcome = await waitFor(copies, id, wait.what, wait.timeoutMs, showReply);
  return outcome.reply ? undefined : waitOutput(id, wait.what, wait.timeoutMs, outcome);
}
