import { whoIsCalling } from "../identity/caller.ts";
import { currentInvocation } from "../identity/invocation.ts";
import { readOne, VIEW_ARGUMENTS } from "../actions/mailbox-view.ts";
import { AgentmailError } from "../mail/errors.ts";
import { formatMessage } from "../mail/format.ts";
import { discards } from "../output/streams.ts";
import { defineCommand, output } from "../cli/definitions.ts";

export default defineCommand({
  meta: {
    name: "read",
    description: "Print one of your messages by id, as receive does, and mark it read",
    examples: ["agentmail read F4gDQJhH", "agentmail read F4gDQJhH --json"],
  },
  args: {
    id: {
      type: "positional",
      required: true,
      valueHint: "id",
      description: VIEW_ARGUMENTS.id,
      hintWhenMissing: "'agentmail inbox' lists ids",
    },
  },
  async run({ args, print }) {
    const id = args.id;
    const { store, caller } = await whoIsCalling(currentInvocation(), "mail");
    if (discards(1)) throw new AgentmailError("io", "stdout is closed or /dev/null, so the message could not be shown; it stays unread");
    // Printed before it is marked read.
    await readOne(store, caller.name, id, (message) => print(output(message, () => formatMessage(message))));
  },
});
