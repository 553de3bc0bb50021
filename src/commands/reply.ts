import { currentInvocation } from "../identity/invocation.ts";
import { reply, REPLY_ARGUMENTS } from "../actions/reply.ts";
import { defineCommand, output } from "../cli/definitions.ts";
import { bodyArgs, bodyOrStdin, FIELD_ARGS, fieldInput } from "./_mail-flags.ts";

export default defineCommand({
  meta: {
    name: "reply",
    description: "Reply to one of your messages: to its sender, in its thread, Re: its subject",
    examples: [
      'agentmail reply F4gDQJhH "Fixed in 4f2a"',
      'agentmail reply F4gDQJhH -t report -m "All green"',
      "git log -1 | agentmail reply F4gDQJhH",
    ],
  },
  args: {
    id: {
      type: "positional",
      required: true,
      valueHint: "id",
      description: REPLY_ARGUMENTS.id,
      hintWhenMissing: "'agentmail inbox --all' lists ids",
    },
    ...bodyArgs(REPLY_ARGUMENTS.message, "The reply"),
    ...FIELD_ARGS,
  },
  async run({ args }) {
    const id = args.id;
    const body = await bodyOrStdin(args.message ?? args.body, "agentmail reply <id> <message>");
    const { message, markFailed, warnings } = await reply(currentInvocation(), id, body, fieldInput(args));
    if (markFailed || warnings.length > 0) {
      const { log } = await import("../output/log.ts");
      for (const warning of warnings) log.warn(warning);
      if (markFailed) {
        log.warn(`the reply was sent, but ${id} could not be marked read (${markFailed.message}); run 'agentmail read ${id}' to mark it`);
      }
    }
    return output({ id: message.id }, message.id + "\n");
  },
});
