import { defineCommand, output, waitMs, type Output } from "../cli/definitions.ts";
import { RECEIVE_ARGUMENTS, receiveMail, unreadWaiting, type ReceiveOptions } from "../actions/receive.ts";
import { receiveAfterTool, receiveOnTurn } from "../actions/hook-mail.ts";
import { whoIsCalling } from "../identity/caller.ts";
import { hookInvocation } from "../identity/hook-invocation.ts";
import { hookStdin } from "./_hook-input.ts";
import { currentInvocation } from "../identity/invocation.ts";
import { AgentmailError } from "../mail/errors.ts";
import { returnedNotice } from "../mail/bounce.ts";
import { formatMessage } from "../mail/format.ts";
import type { Message } from "../mail/message.ts";
import { discards, writeStderr, writeStderrData, writeStdout } from "../output/streams.ts";

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

/** The agent CLIs with a post-tool hook, and what each calls its event in the hook's JSON output. */
const AFTER_TOOL_CLIS = ["claude", "codex", "gemini"] as const;
type AfterToolCli = (typeof AFTER_TOOL_CLIS)[number];
const AFTER_TOOL_EVENT: Record<AfterToolCli, string> = { claude: "PostToolUse", codex: "PostToolUse", gemini: "AfterTool" };

/**
 * The post-tool hook (mid-turn): fresh mail as the hook's JSON `additionalContext` on stdout, exit 0; nothing
 * without mail. In Codex's daemon, for the pane whose thread it serves (none: nothing). Never fails the tool call.
 */
async function afterTool(cli: AfterToolCli): Promise<number> {
  try {
    if (discards(1)) return 0;
    const invocation = await hookInvocation(hookStdin);
    if (invocation === null) return 0;
    await receiveAfterTool(invocation, (text) =>
      writeStdout(`${JSON.stringify({ hookSpecificOutput: { hookEventName: AFTER_TOOL_EVENT[cli], additionalContext: text } })}\n`),
    );
  } catch {
    // Silence: the tool call goes on.
  }
  return 0;
}

async function peekCommand(args: { hook: boolean; wait?: number | null; "after-tool"?: string }): Promise<Output> {
  if (args.hook || args.wait !== undefined || args["after-tool"] !== undefined) {
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
      "agentmail receive --after-tool claude",
    ],
  },
  args: {
    wait: {
      type: "string",
      unit: "seconds",
      optionalValue: true,
      valueHint: "seconds",
      description: `${RECEIVE_ARGUMENTS.wait} (bare: no limit)`,
    },
    hook: {
      type: "boolean",
      description: "For agent hooks: mail goes to stderr with exit 2, urgent first; no mail or any error is silent with exit 0",
    },
    "after-tool": {
      type: "string",
      valueHint: "agent",
      options: AFTER_TOOL_CLIS,
      description: "For an agent's post-tool hook (claude, codex, gemini): fresh mail as the hook's JSON on stdout; no mail, nothing",
    },
    peek: { type: "boolean", description: "Print the oldest unread message without marking it read" },
    ready: { type: "boolean", description: "With --hook: no mail sets your status ready (what a Stop hook runs)" },
  },
  async run({ args, print }) {
    if (args.peek) return peekCommand(args);
    if (args.ready && !args.hook) throw new AgentmailError("usage", "--ready goes with --hook: run 'agentmail receive --hook --ready'");
    // Its value is one of AFTER_TOOL_CLIS: the layer refuses any other (strict-args.ts).
    if (args["after-tool"] !== undefined) return afterTool(args["after-tool"]);
    if (args.hook) {
      // Hooks run on every agent turn and must never fail the turn: with stderr closed there is no one to tell.
      // In Codex's app-server daemon, the hook speaks for the pane whose thread it serves, or for nobody.
      const invocation = await hookInvocation(hookStdin);
      if (invocation === null) return 0;
      // Each message is marked read only once its text is on stderr: a write that fails leaves it unread.
      return receiveOnTurn(invocation, discards(2) ? null : writeStderrData, args.ready);
    }
    const wait = waitMs(args.wait);
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
    // Said as it happens, on stderr: mail whose time to live ran out goes back to its sender instead of being shown.
    const onReturned: ReceiveOptions["onReturned"] = (returned) => writeStderr(`${returnedNotice(returned)}\n`);
    const message = await receiveMail(store, caller.name, show, { onSkip: skips.onSkip, waitMs: wait, confirm, onReturned }).finally(
      skips.report,
    );
    if (!message) return output(null, "No unread messages\n");
    // On stderr in both modes, so stdout stays the message (one document with --json): agents that stop after
    // one message learn that more waits, in their own mailbox or their roles' queues.
    const more = await unreadWaiting(store, caller.name);
    if (more > 0) writeStderr(`${more} more unread; run agentmail receive again\n`);
  },
});
