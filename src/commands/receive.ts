import { defineCommand, output, waitArg, type Output } from "../cli/definitions.ts";
import { receiveMail, receiveOnTurn, type ReceiveOptions } from "../actions/receive.ts";
import { whoIsCalling } from "../identity/caller.ts";
import { currentInvocation } from "../identity/invocation.ts";
import { AgentmailError } from "../mail/errors.ts";
import { formatMessage } from "../mail/format.ts";
import type { Message } from "../mail/message.ts";
import { discards, writeStderr, writeStderrData } from "../output/streams.ts";

/** Collects skipped lines; they are reported after the receive, so consola loads only when there is one. */
function skipCollector(): { onSkip: ReceiveOptions["onSkip"]; report(): Promise<void> } {
  const skipped: string[] = [];
  return {
    onSkip: (mailbox, where, reason) => void skipped.push(`skipped the line at ${where} of ${mailbox}: ${reason}`),
    async report() {
      if (skipped.length === 0) return;
      const { log } = await import("../output/log.ts");
      for (const warning of skipped) log.warn(warning);
    },
  };
}

async function peekCommand(args: { hook?: boolean; wait?: string }): Promise<Output> {
  if (args.hook || args.wait !== undefined) {
    throw new AgentmailError("usage", "--peek cannot be combined with --wait or --hook; run 'agentmail receive --peek' alone");
  }
  const { store, caller } = await whoIsCalling(currentInvocation(), "receive");
  const { peek } = await import("../actions/mailbox-view.ts");
  const message = await peek(store, caller.name);
  return output(message, () => (message ? formatMessage(message) : "No unread messages\n"));
}

export default defineCommand({
  meta: {
    name: "receive",
    description: "Print your oldest unread message and mark it read",
    examples: [
      "agentmail receive",
      "agentmail receive --wait 300",
      "agentmail receive --json",
      "agentmail receive --peek",
      "agentmail receive --hook",
    ],
  },
  args: {
    wait: {
      type: "string",
      optionalValue: true,
      valueHint: "seconds",
      description: "When nothing is unread, block until a message arrives (at most SECONDS)",
    },
    hook: {
      type: "boolean",
      description: "For agent hooks: mail goes to stderr with exit 2, urgent first; no mail or any error is silent with exit 0",
    },
    peek: { type: "boolean", description: "Print the oldest unread message without marking it read" },
    ready: { type: "boolean", description: "With --hook: no mail sets your status ready (what a Stop hook runs)" },
  },
  async run({ args, print }) {
    if (args.peek) return peekCommand(args);
    if (args.ready && !args.hook) throw new AgentmailError("usage", "--ready goes with --hook: run 'agentmail receive --hook --ready'");
    if (args.hook) {
      // Hooks run on every agent turn and must never fail the turn: with stderr closed there is no one to tell.
      const turnOutput = discards(2)
        ? null
        : {
            // The mail is marked read only once all of it is on stderr: a write that fails leaves it unread.
            message: (found: Message) => writeStderrData(`You got new mail\n${formatMessage(found)}`),
            more: (count: number) => writeStderr(`(${count} more unread: run agentmail receive)\n`),
          };
      return receiveOnTurn(currentInvocation(), turnOutput, args.ready === true);
    }
    const wait = waitArg(args.wait);
    const { store, caller, confirm } = await whoIsCalling(currentInvocation(), "receive");
    if (discards(1)) {
      throw new AgentmailError(
        "io",
        "stdout is closed or /dev/null, so a message could not be shown; mail stays unread until you receive with stdout open",
      );
    }
    // Printed before it is marked read.
    const show = (message: Message) => print(output(message, () => formatMessage(message)));
    const skips = skipCollector();
    const message = await receiveMail(store, caller.name, show, { onSkip: skips.onSkip, waitMs: wait, confirm }).finally(skips.report);
    if (!message) return output(null, "No unread messages\n");
    // On stderr in both modes, so stdout stays the message (one document with --json): agents that stop after
    // one message learn that more waits.
    const more = await store.countUnread(caller.name);
    if (more > 0) writeStderr(`${more} more unread; run agentmail receive again\n`);
  },
});
