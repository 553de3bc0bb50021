import { whoIsCalling } from "../identity/caller.ts";
import { currentInvocation } from "../identity/invocation.ts";
import { FOLLOW_ARGUMENTS, sent, sentInBatches, type SentFilter } from "../actions/follow.ts";
import { defineCommand, JsonArrayStream } from "../cli/definitions.ts";
import { usageError } from "../mail/errors.ts";
import { listLines, listText } from "./_mail-list.ts";

export default defineCommand({
  meta: {
    name: "sent",
    description:
      "List the mail you sent, newest first, each with its delivery state: stored, notified, read, acknowledged or bounced, and when",
    examples: ["agentmail sent", "agentmail sent --unread", "agentmail sent --undelivered", "agentmail sent --json"],
  },
  args: {
    unread: { type: "boolean", description: FOLLOW_ARGUMENTS.unread },
    undelivered: { type: "boolean", description: FOLLOW_ARGUMENTS.undelivered },
  },
  async run({ args }) {
    if (args.unread && args.undelivered) throw usageError("--unread and --undelivered do not combine; give one");
    const filter: SentFilter = args.unread ? "unread" : args.undelivered ? "undelivered" : "all";
    const context = await whoIsCalling(currentInvocation(), "mail");
    const { store, caller } = context;
    // A list line never shows more than 1,000 characters of a body: without --json, longer ones are read cut.
    if (context.projects.elsewhere.length === 0) {
      // Only this store: the list is printed a batch at a time as it is read, never held whole.
      return {
        json: () => new JsonArrayStream(sentInBatches(store, caller.name, filter, true)),
        text: () => listLines(sentInBatches(store, caller.name, filter, false), "sent", false),
      };
    }
    // Copies sent into other projects' stores too (send-elsewhere.ts): merged in time order.
    const list = async (whole: boolean) => {
      const { allSent, sentElsewhere } = await import("../actions/send-elsewhere.ts");
      return allSent(await sent(store, caller.name, filter, whole), await sentElsewhere(context, filter, whole));
    };
    return {
      json: () => list(true),
      text: async () => listText(await list(false), "sent", false),
    };
  },
});
