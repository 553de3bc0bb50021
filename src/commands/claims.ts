import { listClaims } from "../actions/claims.ts";
import { currentInvocation } from "../actions/context.ts";
import { defineCommand } from "../cli/definitions.ts";
import { printJson, writeStdout } from "../output/streams.ts";
import { listingLine } from "./claim-print.ts";

export default defineCommand({
  meta: {
    name: "claims",
    description: "List the claims on paths of this repository: who holds what, until when; ended ones say why",
    examples: ["agentmail claims", "agentmail claims --mine", "agentmail claims --json"],
  },
  args: {
    mine: { type: "boolean", description: "Only your own claims" },
  },
  async run({ args }) {
    const listing = await listClaims(currentInvocation(), args.mine === true);
    if (args.json === true) printJson(listing.claims);
    else if (listing.claims.length === 0) writeStdout(args.mine === true ? "You hold no claims\n" : "No claims\n");
    else writeStdout(listing.claims.map((claim) => `${listingLine(claim, listing.now)}\n`).join(""));
  },
});
