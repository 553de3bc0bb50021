import { currentInvocation, whoAmI } from "../actions/context.ts";
import { search, searchPattern } from "../actions/mailbox-view.ts";
import { AgentmailError } from "../core/errors.ts";
import { defineCommand, stringArg } from "../cli/definitions.ts";
import { printList } from "./mail-list.ts";

export default defineCommand({
  meta: {
    name: "search",
    description: "Find your mail (live and archived) and mail you sent by subject or body",
    examples: ["agentmail search flaky", 'agentmail search --regex "PR #1[0-9]"', "agentmail search deploy --json"],
  },
  args: {
    pattern: { type: "positional", required: false, valueHint: "pattern", description: "Text to find, case-insensitive" },
    regex: { type: "boolean", description: "PATTERN is a regular expression (case-insensitive)" },
  },
  async run({ args }) {
    const json = args.json === true;
    const text = stringArg(args, "pattern");
    if (text === undefined) throw new AgentmailError("usage", "missing pattern; usage: agentmail search <pattern>");
    const pattern = searchPattern(text, args.regex === true);
    const { store, caller } = await whoAmI(currentInvocation());
    printList(await search(store, caller.name, pattern), json, "inbox", true);
  },
});
