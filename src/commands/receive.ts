import { AgentmailError } from "../core/errors.ts";
import { formatMessage } from "../core/format.ts";
import { log } from "../output/log.ts";
import { discards, printJson, writeStderr, writeStdout } from "../output/streams.ts";
import { restoreUnread, takeOldestUnread, type SkipReporter } from "../store/mailbox.ts";
import { mailRoot, rootExists } from "../store/paths.ts";
import { resolveCaller } from "../tmux/caller.ts";
import { defineCommand } from "./command.ts";

export const HOOK_EXIT_MAIL = 2;

const reportSkip: SkipReporter = (mailbox, offset, reason) => log.warn(`skipped the line at byte ${offset} of ${mailbox}: ${reason}`);

async function hook(): Promise<number> {
  try {
    const root = mailRoot(process.cwd(), process.env);
    const caller = await resolveCaller();
    if (!rootExists(root) || discards(2)) return 0;
    const message = await takeOldestUnread(root, caller.name, () => {});
    if (!message) return 0;
    writeStderr(`You got new mail\n${formatMessage(message)}`);
    return HOOK_EXIT_MAIL;
  } catch {
    return 0;
  }
}

export default defineCommand({
  meta: { name: "receive", description: "Print your oldest unread message and mark it read" },
  args: {
    hook: { type: "boolean", description: "For agent hooks: mail goes to stderr with exit 2; no mail or any error is silent with exit 0" },
  },
  examples: ["agentmail receive", "agentmail receive --json", "agentmail receive --hook"],
  async run({ args, json }) {
    if (args.hook) return hook();
    const root = mailRoot(process.cwd(), process.env);
    const caller = await resolveCaller();
    if (discards(1)) {
      throw new AgentmailError("io", "stdout is closed or /dev/null, so a message could not be shown; mail stays unread until you receive with stdout open");
    }
    const message = rootExists(root) ? await takeOldestUnread(root, caller.name, reportSkip) : null;
    try {
      if (json) printJson(message);
      else writeStdout(message ? formatMessage(message) : "No unread messages\n");
    } catch (error) {
      if (message) await restoreUnread(root, caller.name, message.id);
      throw error;
    }
  },
});
