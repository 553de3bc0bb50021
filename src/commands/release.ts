import { releasePaths } from "../actions/claims.ts";
import { currentInvocation } from "../actions/context.ts";
import { hookInvocation } from "../actions/hook-invocation.ts";
import { defineCommand, stringListArg } from "../cli/definitions.ts";
import { AgentmailError } from "../core/errors.ts";
import { displayName } from "../core/names.ts";
import { printJson, writeStdout } from "../output/streams.ts";
import { warnAll } from "./claim-print.ts";

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
      description: "The paths or globs as you claimed them; leave out to release every claim of yours",
    },
    auto: { type: "boolean", description: "Release only the claims the pre-edit guard made for you (hooks install --auto-claim)" },
  },
  async run({ args }) {
    const json = args.json === true;
    const paths = stringListArg(args, "paths");
    if (args.auto === true && paths.length > 0) throw new AgentmailError("usage", "give paths or --auto, not both");
    // --auto is what the session-end hook runs: in Codex's daemon, for the pane whose thread ended.
    const invocation = args.auto === true ? await hookInvocation() : currentInvocation();
    if (invocation === null) return;
    const result = await releasePaths(invocation, paths, args.auto === true);
    await warnAll(result.warnings);
    if (json) printJson({ holder: result.holder, released: result.released });
    else if (result.released.length === 0) writeStdout("No claims to release\n");
    else writeStdout(result.released.map((claim) => `released ${displayName(claim.path)}\n`).join(""));
  },
});
