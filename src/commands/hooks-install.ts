import { defineCommand } from "../cli/definitions.ts";
import { currentInvocation } from "../actions/context.ts";
import { binaryArg, hooksArgs, hooksFlags, trustArg } from "./hooks-args.ts";

export default defineCommand({
  meta: {
    name: "install",
    description:
      "Add agentmail's hooks and MCP server to an agent's settings (merged in, backed up first; running it again changes nothing)",
    examples: [
      "agentmail hooks install claude",
      "agentmail hooks install codex --user",
      "agentmail hooks install codex --trust",
      "agentmail hooks install gemini --dry-run",
      "agentmail hooks install claude --binary /opt/agentmail/agentmail",
    ],
  },
  args: { ...hooksArgs, binary: binaryArg, trust: trustArg },
  async run({ args }) {
    const { runHooks } = await import("./hooks-edit-settings.ts");
    return runHooks("install", hooksFlags(args, args.binary, args.trust === true), currentInvocation());
  },
});
