import type { Membership } from "../actions/roles.ts";
import { displayName } from "../mail/names.ts";
import { printJson, writeStdout } from "../output/streams.ts";

/** What join and leave print: what happened, and the role's members now. */
export async function printMembership(verb: "joined" | "left", membership: Membership, json: boolean): Promise<void> {
  if (json) printJson({ role: membership.role, members: membership.members, changed: membership.changed });
  else {
    const what = membership.changed
      ? `${verb} ${displayName(membership.role)}`
      : `already ${verb === "joined" ? "in" : "not in"} ${displayName(membership.role)}`;
    const members = membership.members.length > 0 ? membership.members.map(displayName).join(", ") : "none";
    writeStdout(`${what} (members: ${members})\n`);
  }
  if (membership.warning) {
    const { log } = await import("../output/log.ts");
    log.warn(membership.warning);
  }
}
