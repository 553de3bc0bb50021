import { currentInvocation, storeAt } from "../actions/context.ts";
import { thread } from "../actions/mailbox-view.ts";
import { AgentmailError } from "../core/errors.ts";
import { threadEntry } from "../core/inbox-line.ts";
import { printJson, writeStdout } from "../output/streams.ts";
import { defineCommand, stringArg } from "../cli/definitions.ts";

export default defineCommand({
  meta: {
    name: "thread",
    description: "Print every message of a thread, in every mailbox, oldest first; marks nothing",
    examples: ["agentmail thread F4gDQJhH", "agentmail thread F4gDQJhH --json"],
  },
  args: { id: { type: "positional", required: false, valueHint: "id", description: "The id of any message of the thread" } },
  async run({ args }) {
    const json = args.json === true;
    const id = stringArg(args, "id");
    if (id === undefined) throw new AgentmailError("usage", "missing id; usage: agentmail thread <id>; 'agentmail inbox --all' lists ids");
    const place = currentInvocation();
    const messages = await thread(await storeAt(place), id);
    if (json) printJson(messages);
    else writeStdout(messages.map(threadEntry).join("\n"));
  },
});
