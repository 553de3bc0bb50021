import { currentInvocation, whoAmI } from "../actions/context.ts";
import { search, searchPattern } from "../actions/mailbox-view.ts";
import { defineCommand } from "../cli/definitions.ts";
import { printList } from "./mail-list.ts";

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
    const json = args.json === true;
    const pattern = searchPattern(args.pattern, args.regex === true);
    const { store, caller } = await whoAmI(currentInvocation());
    printList(await search(store, caller.name, pattern, args.regex !== true), json, "inbox", true);
  },
});
