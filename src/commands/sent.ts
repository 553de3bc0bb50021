import { whoIsCalling } from "../identity/caller.ts";
import { currentInvocation } from "../identity/invocation.ts";
import { sent, type SentFilter } from "../actions/follow.ts";
import { defineCommand } from "../cli/definitions.ts";
import { usageError } from "../mail/errors.ts";
import { listText } from "./_mail-list.ts";

export default defineCommand({
  meta: {
    name: "sent",
    description:
      "List the mail you sent, newest first, each with its delivery state: stored, notified, read, acknowledged or bounced, and when",
    examples: ["agentmail sent", "agentmail sent --unread", "agentmail sent --undelivered", "agentmail sent --json"],
  },
  args: {
    unread: { type: "boolean", description: "Only mail nobody has read yet" },
    undelivered: { type: "boolean", description: "Only mail that bounced: returned to you unread, with why" },
  },
  async run({ args }) {
    if (args.unread === true && args.undelivered === true) throw usageError("--unread and --undelivered do not combine; give one");
    const filter: SentFilter = args.unread === true ? "unread" : args.undelivered === true ? "undelivered" : "all";
    const context = await whoIsCalling(currentInvocation(), "mail");
    const { store, caller } = context;
    // Copies sent into other projects' stores (send-elsewhere.ts) are looked for only when other projects are here.
    const list = async (whole: boolean) => {
      const here = await sent(store, caller.name, filter, whole);
      if (context.projects.elsewhere.length === 0) return here;
      const { allSent, sentElsewhere } = await import("../actions/send-elsewhere.ts");
      return allSent(here, await sentElsewhere(context, filter, whole));
    };
    // A list line never shows more than 1,000 characters of a body: without --json, longer ones are read cut.
    return {
      json: () => list(true),
      text: async () => listText(await list(false), "sent", false),
    };
  },
});
