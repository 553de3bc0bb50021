import { acknowledge, FOLLOW_ARGUMENTS } from "../actions/follow.ts";
import { whoIsCalling } from "../identity/caller.ts";
import { currentInvocation } from "../identity/invocation.ts";
import { defineCommand, output } from "../cli/definitions.ts";

export default defineCommand({
  meta: {
    name: "ack",
    description:
      "Acknowledge messages of yours by id (marked read too): their senders' sent says acknowledged, and a send --wait-for ack ends",
    examples: ["agentmail ack F4gDQJhH", "agentmail ack F4gDQJhH K2pQxM9a --json"],
  },
  args: {
    ids: {
      type: "positional",
      required: true,
      multiple: true,
      valueHint: "id",
      description: FOLLOW_ARGUMENTS.ids,
      hintWhenMissing: "'agentmail inbox --all' lists ids",
    },
  },
  async run({ args }) {
    const { store, caller } = await whoIsCalling(currentInvocation(), "mail");
    const acknowledged = await acknowledge(store, caller.name, args.ids);
    return output({ acknowledged }, () => `Acknowledged ${acknowledged.join(" ")}\n`);
  },
});
