import { defineCommand, numberArg } from "../cli/definitions.ts";
import { receiveMail } from "../actions/receive.ts";
import { currentInvocation, whoReceives, type Invocation } from "../actions/context.ts";
import { pointHooks, setStatus } from "../actions/status.ts";
import { AgentmailError } from "../core/errors.ts";
import { formatMessage } from "../core/format.ts";
import { urgentFirst } from "../core/mail-fields.ts";
import type { Message } from "../core/message.ts";
import { discards, printJson, writeStderr, writeStderrData, writeStdout } from "../output/streams.ts";
import type { SkipReporter } from "../store/store.ts";
import type { Caller } from "../tmux/caller.ts";

export const HOOK_EXIT_MAIL = 2;

/** Collects skipped lines; they are reported after the receive, so consola loads only when there is one. */
function skipCollector(): { onSkip: SkipReporter; report(): Promise<void> } {
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

/**
 * Hooks run on every agent turn and must never fail the turn: mail is exit 2 on stderr, anything else silence.
 * The oldest urgent message comes before older ones. The pane is pointed at its doorbell, which is emptied once
 * nothing is unread, so the installed Stop hook's shell can skip starting agentmail until mail comes (doorbell.ts).
 * `ready`: no mail sets the status ready (the Stop hook's other half, without a second process); that part fails
 * as `agentmail status ready` would.
 */
async function hook(ready: boolean): Promise<number> {
  const invocation = currentInvocation();
  const delivered = await deliverToHook(invocation);
  if (delivered === true) return HOOK_EXIT_MAIL;
  if (ready) await setStatus(invocation, "ready", delivered || undefined);
  return 0;
}

/** true when a message went out; otherwise what tmux said about the caller, if it was asked (or false). */
async function deliverToHook(invocation: Invocation): Promise<true | Caller | false> {
  let tmux: Caller | undefined;
  try {
    if (discards(2)) return false;
    const receiver = await whoReceives(invocation);
    const { store, caller, confirm } = receiver;
    tmux = receiver.tmux;
    pointHooks(store, invocation.env, caller.name);
    // The mail is marked read only once all of it is on stderr: a write that fails leaves it unread.
    const show = (found: Message) => writeStderrData(`You got new mail\n${formatMessage(found)}`);
    const message = await receiveMail(store, caller.name, show, { onSkip: () => {}, prefer: urgentFirst, confirm });
    if (!message) {
      await store.doorbells?.settle(caller.name);
      return tmux ?? false;
    }
    // After the mark, best effort: the message is delivered whether or not these work out.
    await afterDelivery(async () => {
      const more = await store.countUnread(caller.name);
      if (more > 0) writeStderr(`(${more} more unread: run agentmail receive)\n`);
    });
    await afterDelivery(() => store.doorbells?.settle(caller.name));
    return true;
  } catch {
    return tmux ?? false;
  }
}

async function afterDelivery(step: () => Promise<void> | undefined): Promise<void> {
  try {
    await step();
  } catch {
    // See above.
  }
}

/** A bare --wait waits for as long as it takes (null); --wait SECONDS at most that long. */
function waitMs(value: string | undefined): number | null | undefined {
  if (value === undefined) return undefined;
  if (value === "") return null;
  return numberArg("--wait", value, "seconds") * 1000;
}

async function peekCommand(args: { hook?: boolean; wait?: string }, json: boolean): Promise<void> {
  if (args.hook || args.wait !== undefined) {
    throw new AgentmailError("usage", "--peek cannot be combined with --wait or --hook; run 'agentmail receive --peek' alone");
  }
  const { store, caller } = await whoReceives(currentInvocation());
  const { peek } = await import("../actions/mailbox-view.ts");
  const message = await peek(store, caller.name);
  if (json) printJson(message);
  else writeStdout(message ? formatMessage(message) : "No unread messages\n");
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
  async run({ args }) {
    const json = args.json === true;
    if (args.peek) return peekCommand(args, json);
    if (args.ready && !args.hook) throw new AgentmailError("usage", "--ready goes with --hook: run 'agentmail receive --hook --ready'");
    if (args.hook) return hook(args.ready === true);
    const wait = waitMs(args.wait);
    const { store, caller, confirm } = await whoReceives(currentInvocation());
    if (discards(1)) {
      throw new AgentmailError(
        "io",
        "stdout is closed or /dev/null, so a message could not be shown; mail stays unread until you receive with stdout open",
      );
    }
    const show = (message: Message) => (json ? printJson(message) : writeStdout(formatMessage(message)));
    const skips = skipCollector();
    const message = await receiveMail(store, caller.name, show, { onSkip: skips.onSkip, waitMs: wait, confirm }).finally(skips.report);
    if (!message) {
      if (json) printJson(null);
      else writeStdout("No unread messages\n");
      return;
    }
    // On stderr in both modes, so stdout stays the message (one document with --json): agents that stop after
    // one message learn that more waits.
    const more = await store.countUnread(caller.name);
    if (more > 0) writeStderr(`${more} more unread; run agentmail receive again\n`);
  },
});
