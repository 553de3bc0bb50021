import { addBridge } from "../../actions/bridge.ts";
import { currentInvocation } from "../../identity/invocation.ts";
import { displayName } from "../../mail/names.ts";
import { defineCommand, output, stringArg, stringListArg } from "../../cli/definitions.ts";

export default defineCommand({
  meta: {
    name: "add",
    description: "Bridge a FEAT-124 .mail/ directory, the Roo mailbox, or a D-Mail endpoint (kept in the store)",
    examples: [
      "agentmail bridge add feat124",
      "agentmail bridge add roo --dir .roo/mailbox",
      "agentmail bridge add dmail paintress --dir ../paintress/.expedition --route report=reviewer --to lead",
    ],
  },
  args: {
    kind: { type: "positional", required: true, valueHint: "kind", options: ["feat124", "roo", "dmail"], description: "Which peer" },
    name: {
      type: "positional",
      required: false,
      valueHint: "name",
      description: "dmail: the endpoint's name, used in dmail:NAME addresses",
    },
    dir: {
      type: "string",
      valueHint: "dir",
      description:
        "feat124: the .mail directory (default: .mail at the repository's top); roo: the mailbox (default: .roo/mailbox); " +
        "dmail: the tool's directory with inbox/, outbox/, archive/",
    },
    route: {
      type: "string",
      multiple: true,
      valueHint: "kind=recipient",
      description: "dmail: deliver this D-Mail kind to this agent; repeat for several kinds",
    },
    to: { type: "string", valueHint: "recipient", description: "dmail: deliver every other kind to this agent" },
  },
  async run({ args }) {
    const kind = args.kind;
    const [name, dir, to] = [stringArg(args, "name"), stringArg(args, "dir"), stringArg(args, "to")];
    const bridge = await addBridge(currentInvocation(), { kind, name, dir, routes: stringListArg(args, "route"), to });
    return output(bridge, () => `${displayName(bridge.name)} ${displayName(bridge.dir)}\n`);
  },
});
