import { archive } from "../actions/archive.ts";
import { whoIsCalling } from "../identity/caller.ts";
import { currentInvocation } from "../identity/invocation.ts";
import { AgentmailError } from "../mail/errors.ts";
import { defineCommand, output } from "../cli/definitions.ts";
import { megabytes, startProgress } from "../output/progress.ts";

export default defineCommand({
  meta: {
    name: "archive",
    description: "Move messages out of your mailbox into your archive (inbox --archived, read, search still find them)",
    examples: ["agentmail archive F4gDQJhH K2pQxM9a", "agentmail archive --read", "agentmail archive --read --older-than 24"],
  },
  args: {
    ids: { type: "positional", required: false, multiple: true, valueHint: "id", description: "The ids of the messages to archive" },
    read: { type: "boolean", description: "Archive all your read messages instead" },
    "older-than": {
      type: "string",
      unit: "hours",
      valueHint: "hours",
      description: "With --read: only those sent more than this long ago",
    },
  },
  async run({ args }) {
    const { ids, "older-than": olderThan } = args;
    if (args.read && ids.length > 0)
      throw new AgentmailError("usage", "give ids or --read, not both; usage: agentmail archive <id>... | --read [--older-than HOURS]");
    if (olderThan !== undefined && !args.read)
      throw new AgentmailError("usage", "--older-than goes with --read; usage: agentmail archive --read --older-than HOURS");
    const request = args.read ? { read: true as const, olderThanHours: olderThan ?? 0 } : { ids };
    const { store, caller } = await whoIsCalling(currentInvocation(), "mail");
    const progress = megabytes(await startProgress("archive", { steps: "mailboxes", items: "MB read" }, 1));
    const archived = await archive(store, caller.name, request, Date.now(), (bytes) => progress.add(0, bytes)).finally(() =>
      progress.end(),
    );
    return output({ archived }, `Archived ${archived.length} message${archived.length === 1 ? "" : "s"}\n`);
  },
});
