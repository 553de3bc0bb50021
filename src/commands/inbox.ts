import { whoIsCalling } from "../identity/caller.ts";
import { currentInvocation } from "../identity/invocation.ts";
import { inbox, VIEW_ARGUMENTS } from "../actions/mailbox-view.ts";
import { FILTER_ARGUMENTS, mailFilter, MESSAGE_TYPES, PRIORITIES } from "../mail/fields.ts";
import { defineCommand } from "../cli/definitions.ts";
import { writeStderr } from "../output/streams.ts";
import { listOutput } from "./_mail-list.ts";

export default defineCommand({
  meta: {
    name: "inbox",
    description: "List your unread mail, oldest first, without marking it read",
    examples: [
      "agentmail inbox",
      "agentmail inbox --all --from reviewer",
      "agentmail inbox --priority high",
      "agentmail inbox --archived --json",
    ],
  },
  args: {
    all: { type: "boolean", alias: "a", description: `${VIEW_ARGUMENTS.all} (unread marked *)` },
    archived: { type: "boolean", description: VIEW_ARGUMENTS.archived },
    from: { type: "string", valueHint: "name", description: FILTER_ARGUMENTS.from },
    type: { type: "string", alias: "t", valueHint: "type", description: `${FILTER_ARGUMENTS.type}: ${MESSAGE_TYPES.join(", ")}` },
    priority: { type: "string", alias: "p", valueHint: "level", description: `${FILTER_ARGUMENTS.priority}: ${PRIORITIES.join(", ")}` },
    tag: { type: "string", valueHint: "tag", description: FILTER_ARGUMENTS.tag },
    thread: { type: "string", valueHint: "id", description: FILTER_ARGUMENTS.thread },
  },
  async run({ args }) {
    const { from, type, priority, tag, thread } = args;
    const filter = mailFilter({ from, type, priority, tag, thread });
    const { store, caller } = await whoIsCalling(currentInvocation(), "mail");
    const all = args.all;
    const archived = args.archived;
    let expired = 0;
    const messages = await inbox(store, caller.name, { all, archived, filter, onExpired: (count) => void (expired = count) });
    // On stderr in both modes, as receive's hint: the list (stdout) is what receive can show.
    if (expired > 0) {
      const which =
        expired === 1 ? "1 unread message whose time to live ran out is" : `${expired} unread messages whose time to live ran out are`;
      writeStderr(`${which} not listed: receive returns such mail to its sender instead of showing it\n`);
    }
    return listOutput(messages, "inbox", all || archived);
  },
});
