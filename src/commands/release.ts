import { CLAIM_ARGUMENTS, releasePaths } from "../actions/claims.ts";
import { currentInvocation } from "../identity/invocation.ts";
import { hookInvocation } from "../identity/hook-invocation.ts";
import { hookStdin } from "./_hook-input.ts";
import { defineCommand, output } from "../cli/definitions.ts";
import { AgentmailError } from "../mail/errors.ts";
import { displayName } from "../mail/names.ts";
import { warnAll } from "./_claims.ts";

export default defineCommand({
  meta: {
    name: "release",
    description: "Release your claims on paths (all of them if none is given); whoever waited for them is told by mail",
    examples: ["agentmail release src/auth.ts", "agentmail release", "agentmail release --auto"],
  },
  args: {
    paths: {
      type: "positional",
      required: false,
      multiple: true,
      valueHint: "path|glob",
      description: CLAIM_ARGUMENTS.released,
    },
    auto: { type: "boolean", description: "Release only the claims the pre-edit guard made for you (hooks install --auto-claim)" },
  },
  async run({ args }) {
    const { paths } = args;
    if (args.auto && paths.length > 0) throw new AgentmailError("usage", "give paths or --auto, not both");
    // --auto is what the session-end hook runs: in Codex's daemon, for the pane whose thread ended.
    const invocation = args.auto ? await hookInvocation(hookStdin) : currentInvocation();
    if (invocation === null) return output(null, "");
    const result = await releasePaths(invocation, paths, args.auto);
    await warnAll(result.warnings);
    return output({ holder: result.holder, released: result.released }, () => {
      if (result.released.length === 0) return "No claims to release\n";
      return result.released.map((claim) => `released ${displayName(claim.path)}\n`).join("");
    });
  },
});
