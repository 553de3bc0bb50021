import { here } from "../actions/context.ts";
import { thread } from "../actions/mailbox-view.ts";
import { AgentmailError } from "../core/errors.ts";
import { threadEntry } from "../core/inbox-line.ts";
import { printJson, writeStdout } from "../output/streams.ts";
import { mailRoot } from "../store/paths.ts";
import { defineCommand, stringArg } from "./command.ts";

export default defineCommand({
  meta: { name: "thread", description: "Print every message of a thread, in every mailbox, oldest first; marks nothing" },
  args: { id: { type: "positional", valueHint: "id", description: "The id of any message of the thread" } },
  examples: ["agentmail thread F4gDQJhH", "agentmail thread F4gDQJhH --json"],
  async run({ args, json }) {
    const id = stringArg(args, "id");
    if (id === undefined) throw new AgentmailError("usage", "missing id; usage: agentmail thread <id>; 'agentmail inbox --all' lists ids");
    const place = here();
    const messages = thread(mailRoot(place.cwd, place.env), id);
    if (json) printJson(messages);
    else writeStdout(messages.map(threadEntry).join("\n"));
  },
});
