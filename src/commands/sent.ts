import { currentInvocation, whoIsCalling } from "../identity/caller.ts";
import { sent } from "../actions/mailbox-view.ts";
import { defineCommand } from "../cli/definitions.ts";
import { printList } from "./mail-list.ts";

export default defineCommand({
  meta: {
    name: "sent",
    description: "List the mail you sent, newest first, each with its receipt: unread, or read and when",
    examples: ["agentmail sent", "agentmail sent --unread", "agentmail sent --json"],
  },
  args: { unread: { type: "boolean", description: "Only mail nobody has read yet" } },
  async run({ args }) {
    const json = args.json === true;
    const { store, caller } = await whoIsCalling(currentInvocation(), "mail");
    printList(await sent(store, caller.name, args.unread === true, json), json, "sent", false);
  },
});
