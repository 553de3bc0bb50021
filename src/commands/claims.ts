import { CLAIM_ARGUMENTS, listClaims } from "../actions/claims.ts";
import { currentInvocation } from "../identity/invocation.ts";
import { defineCommand, output } from "../cli/definitions.ts";
import { listingLine } from "./_claims.ts";

export default defineCommand({
  meta: {
    name: "claims",
    description: "List the claims on paths of this repository: who holds what, until when; ended ones say why",
    examples: ["agentmail claims", "agentmail claims --mine", "agentmail claims --json"],
  },
  args: {
    mine: { type: "boolean", description: CLAIM_ARGUMENTS.mine },
  },
  async run({ args }) {
    const listing = await listClaims(currentInvocation(), args.mine);
    return output(listing.claims, () => {
      if (listing.claims.length === 0) return args.mine ? "You hold no claims\n" : "No claims\n";
      return listing.claims.map((claim) => `${listingLine(claim, listing.now)}\n`).join("");
    });
  },
});
