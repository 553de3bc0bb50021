import type { Membership } from "../actions/roles.ts";
import { output, type Output } from "../cli/definitions.ts";
import { displayName } from "../mail/names.ts";

/** What join and leave print: what happened, and the role's members now. */
export function membershipOutput(verb: "joined" | "left", membership: Membership): Output {
  const json = { role: membership.role, members: membership.members, changed: membership.changed };
  return output(
    json,
    () => {
      const what = membership.changed
        ? `${verb} ${displayName(membership.role)}`
        : `already ${verb === "joined" ? "in" : "not in"} ${displayName(membership.role)}`;
      const members = membership.members.length > 0 ? membership.members.map(displayName).join(", ") : "none";
      return `${what} (members: ${members})\n`;
    },
    {
      async after() {
        if (!membership.warning) return;
        const { log } = await import("../output/log.ts");
        log.warn(membership.warning);
      },
    },
  );
}
