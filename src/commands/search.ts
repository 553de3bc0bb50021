import { whoIsCalling } from "../identity/caller.ts";
import { currentInvocation } from "../identity/invocation.ts";
import { search, searchPattern } from "../actions/mailbox-view.ts";
import { defineCommand } from "../cli/definitions.ts";
import { listOutput } from "./_mail-list.ts";

export default defineCommand({
  meta: {
    name: "search",
    description: "Find your mail (live and archived) and mail you sent by subject or body",
    examples: ["agentmail search flaky", 'agentmail search --regex "PR #1[0-9]"', "agentmail search deploy --json"],
  },
  args: {
    pattern: { type: "positional", required: true, valueHint: "pattern", description: "Text to find, case-insensitive" },
    regex: { type: "boolean", description: "PATTERN is a regular expression (case-insensitive)" },
  },
  async run({ args }) {
    const pattern = searchPattern(args.pattern, args.regex);
    const { store, caller } = await whoIsCalling(currentInvocation(), "mail");
    return listOutput(await search(store, caller.name, pattern, !args.regex), "inbox", true);
  },
});
