import { whoIsCalling } from "../identity/caller.ts";
import { currentInvocation } from "../identity/invocation.ts";
import { sent } from "../actions/mailbox-view.ts";
import { defineCommand } from "../cli/definitions.ts";
import { listText } from "./_mail-list.ts";

export default defineCommand({
  meta: {
    name: "sent",
    description: "List the mail you sent, newest first, each with its receipt: unread, or read and when",
    examples: ["agentmail sent", "agentmail sent --unread", "agentmail sent --json"],
  },
  args: { unread: { type: "boolean", description: "Only mail nobody has read yet" } },
  async run({ args }) {
    const { store, caller } = await whoIsCalling(currentInvocation(), "mail");
    const unread = args.unread === true;
    // A list line never shows more than 1,000 characters of a body: without --json, longer ones are read cut.
    return {
      json: () => sent(store, caller.name, unread, true),
      text: async () => listText(await sent(store, caller.name, unread, false), "sent", false),
    };
  },
});
