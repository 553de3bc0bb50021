import type { Group } from "../../actions/groups.ts";
import { displayName } from "../../mail/names.ts";

/** One group on one line: `reviewers: alice, bob`. */
export const groupLine = (group: Group): string => `${displayName(group.name)}: ${group.members.map(displayName).join(", ")}\n`;
