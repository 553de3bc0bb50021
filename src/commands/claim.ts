import { CLAIM_ARGUMENTS, claimPaths } from "../actions/claims.ts";
import { currentInvocation } from "../identity/invocation.ts";
import { checkReason, DEFAULT_TTL_MS, describeClaim, parseTtl } from "../claims/claims.ts";
import { defineCommand, output, waitMs } from "../cli/definitions.ts";
import { AgentmailError } from "../mail/errors.ts";
import { warnAll } from "./_claims.ts";

export default defineCommand({
  meta: {
    name: "claim",
    description:
      "Claim paths or globs of the repository for yourself, so other agents do not edit them: exclusive unless --shared, " +
      "until you release them, the time runs out (--ttl, default 1h) or you are gone",
    examples: [
      "agentmail claim src/auth.ts",
      'agentmail claim "src/api/**" docs/api.md --reason "new endpoints" --ttl 2h',
      "agentmail claim src/config.ts --shared",
      "agentmail claim src/auth.ts --wait 600",
      "agentmail claim --renew",
    ],
  },
  args: {
    paths: {
      type: "positional",
      required: false,
      multiple: true,
      valueHint: "path|glob",
      description: CLAIM_ARGUMENTS.paths,
    },
    ttl: { type: "string", valueHint: "duration", description: `${CLAIM_ARGUMENTS.ttl}: 90s, 30m, 2h, 1d (default 1h)` },
    shared: { type: "boolean", description: CLAIM_ARGUMENTS.shared },
    reason: { type: "string", valueHint: "text", description: CLAIM_ARGUMENTS.reason },
    wait: {
      type: "string",
      unit: "seconds",
      optionalValue: true,
      valueHint: "seconds",
      description: `${CLAIM_ARGUMENTS.wait} (bare: until it is free)`,
    },
    renew: { type: "boolean", description: CLAIM_ARGUMENTS.renew },
  },
  async run({ args }) {
    const { paths, reason, ttl, wait } = args;
    if (args.renew && (args.shared || reason !== undefined || wait !== undefined)) {
      throw new AgentmailError("usage", "--renew takes only paths and --ttl; to change a claim, claim it again");
    }
    if (!args.renew && paths.length === 0) {
      throw new AgentmailError("usage", "give the paths or globs to claim, e.g. agentmail claim src/auth.ts; run 'agentmail claim --help'");
    }
    const result = await claimPaths(currentInvocation(), {
      paths,
      shared: args.shared,
      reason: reason === undefined ? undefined : checkReason(reason),
      ttlMs: ttl === undefined ? DEFAULT_TTL_MS : parseTtl(ttl),
      waitMs: waitMs(wait),
      renew: args.renew,
    });
    await warnAll(result.warnings);
    const verb = args.renew ? "renewed" : "claimed";
    return output({ holder: result.holder, claims: result.claims }, () =>
      result.claims.map((claim) => `${verb} ${describeClaim(claim, result.now)}\n`).join(""),
    );
  },
});
