import { storeAt } from "../identity/caller.ts";
import { currentInvocation } from "../identity/invocation.ts";
import { thread, VIEW_ARGUMENTS } from "../actions/mailbox-view.ts";
import { threadEntry } from "../mail/format.ts";
import { defineCommand, output } from "../cli/definitions.ts";

export default defineCommand({
  meta: {
    name: "thread",
    description: "Print every message of a thread, in every mailbox, oldest first; marks nothing",
    examples: ["agentmail thread F4gDQJhH", "agentmail thread F4gDQJhH --json"],
  },
  args: {
    id: {
      type: "positional",
      required: true,
      valueHint: "id",
      description: VIEW_ARGUMENTS.threadId,
      hintWhenMissing: "'agentmail inbox --all' lists ids",
    },
  },
  async run({ args }) {
    const id = args.id;
    const invocation = currentInvocation();
    const messages = await thread(await storeAt(invocation), id);
    return output(messages, () => messages.map(threadEntry).join("\n"));
  },
});
