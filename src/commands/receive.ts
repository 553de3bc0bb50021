import { defineCommand, numberArg, stringArg } from "../cli/definitions.ts";
import { receiveMail } from "../actions/receive.ts";
import { currentInvocation, whoReceives } from "../actions/context.ts";
import { AgentmailError } from "../core/errors.ts";
import { formatMessage } from "../core/format.ts";
import { displayName } from "../core/names.ts";
import type { Message } from "../core/message.ts";
import { stopHookMail, toolHookMail, type HookTarget } from "../actions/hook-mail.ts";
import { budgetOf } from "../delivery/frame.ts";
import { discards, printJson, writeStderr, writeStderrData, writeStdout } from "../output/streams.ts";
import type { SkipReporter } from "../store/store.ts";

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

/** Who a hook receives for (in Codex's daemon, the pane whose thread it serves), or null: then it does nothing. */
async function hookTarget(): Promise<HookTarget | null> {
  const { hookInvocation } = await import("../actions/hook-invocation.ts");
  const invocation = await hookInvocation();
  if (invocation === null) return null;
  const { store, caller, confirm } = await whoReceives(invocation);
  return { store, agent: caller.name, pane: caller.paneId, confirm, budget: budgetOf(invocation.env) };
}

/**
 * The end-of-turn hook. Hooks run on every agent turn and must never fail the turn: mail is exit 2 on stderr,
 * anything else silence. Urgent mail first; what a native frame already brought is left alone (hook-mail.ts).
 */
async function hook(): Promise<number> {
  try {
    if (discards(2)) return 0;
    const target = await hookTarget();
    if (target === null) return 0;
    // Each message is marked read only once its text is on stderr: a write that fails leaves it unread.
    const carried = await stopHookMail(target, writeStderrData);
    return carried > 0 ? HOOK_EXIT_MAIL : 0;
  } catch {
    return 0;
  }
}

/** What each agent CLI's post-tool hook event is called in its JSON output. */
const AFTER_TOOL_EVENT = { claude: "PostToolUse", codex: "PostToolUse", gemini: "AfterTool" } as const;
type AfterToolCli = keyof typeof AFTER_TOOL_EVENT;

/**
 * The post-tool hook (mid-turn): fresh mail as the hook's JSON `additionalContext` on stdout, exit 0; nothing
 * without mail. Never fails the agent's tool call.
 */
async function afterTool(cli: AfterToolCli): Promise<number> {
  try {
    if (discards(1)) return 0;
    const target = await hookTarget();
    if (target === null) return 0;
    await toolHookMail(target, (text) =>
      writeStdout(`${JSON.stringify({ hookSpecificOutput: { hookEventName: AFTER_TOOL_EVENT[cli], additionalContext: text } })}\n`),
    );
  } catch {
    // Silence: the tool call goes on.
  }
  return 0;
}

/** A bare --wait waits for as long as it takes (null); --wait SECONDS at most that long. */
function waitMs(value: string | undefined): number | null | undefined {
  if (value === undefined) return undefined;
  if (value === "") return null;
  return numberArg("--wait", value, "seconds") * 1000;
}

async function peekCommand(args: { hook?: boolean; wait?: string; "after-tool"?: string }, json: boolean): Promise<void> {
  if (args.hook || args.wait !== undefined || args["after-tool"] !== undefined) {
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
      "agentmail receive --after-tool claude",
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
    "after-tool": {
      type: "string",
      valueHint: "agent",
      options: Object.keys(AFTER_TOOL_EVENT),
      description: "For an agent's post-tool hook (claude, codex, gemini): fresh mail as the hook's JSON on stdout; no mail, nothing",
    },
    peek: { type: "boolean", description: "Print the oldest unread message without marking it read" },
  },
  async run({ args }) {
    const json = args.json === true;
    if (args.peek) return peekCommand(args, json);
    const afterToolFor = stringArg(args, "after-tool");
    if (afterToolFor !== undefined) {
      if (!(afterToolFor in AFTER_TOOL_EVENT))
        throw new AgentmailError("usage", `--after-tool takes claude, codex or gemini, not '${displayName(afterToolFor)}'`);
      return afterTool(afterToolFor as AfterToolCli);
    }
    if (args.hook) return hook();
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
