import { defineCommand } from "../cli/definitions.ts";
import { currentInvocation } from "../actions/context.ts";
import { binaryArg, hooksArgs, hooksRequest, trustArg } from "./hooks-args.ts";

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
    const invocation = currentInvocation();
    const request = hooksRequest("install", args, invocation.cwd, { binary: args.binary, trust: args.trust === true });
    const [{ editHookSettings }, { printHooksResult }] = await Promise.all([import("../actions/hooks.ts"), import("./hooks-print.ts")]);
    printHooksResult("install", request, editHookSettings(invocation, "install", request), args.json === true);
  },
});
