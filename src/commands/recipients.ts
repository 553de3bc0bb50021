import { defineCommand, output } from "../cli/definitions.ts";
import { whoIsCalling } from "../identity/caller.ts";
import { currentInvocation } from "../identity/invocation.ts";
import { addressBook, RECIPIENTS_ARGUMENTS, type AddressEntry } from "../identity/recipients.ts";
import { age } from "../mail/format.ts";
import { displayName } from "../mail/names.ts";

/** `ready, seen 5m ago` for a registered agent; nothing for one that never ran agentmail. */
function presence(entry: { status?: string | null; last_seen?: string | null }, now: number): string {
  if (!entry.status) return "";
  return `  ${displayName(entry.status)}${entry.last_seen ? `, seen ${age(entry.last_seen, now)} ago` : ""}`;
}

export default defineCommand({
  meta: {
    name: "recipients",
    description:
      "List whom you can send to: this project's windows of your tmux session (yours [you], names tmux chose [auto]), " +
      "agents on other hosts [host H], the person watching the room [person], each with its status and when last seen; " +
      "groups and roles",
    examples: ["agentmail recipients", "agentmail recipients --all", "agentmail recipients --json"],
  },
  args: {
    all: { type: "boolean", description: RECIPIENTS_ARGUMENTS.all },
  },
  async run({ args }) {
    const entries = await addressBook(await whoIsCalling(currentInvocation(), "mail"), args.all);
    const now = Date.now();
    const line = (entry: AddressEntry) => {
      if ("members" in entry) {
        const kind = entry.name.startsWith("@") ? "group" : "role";
        return `${displayName(entry.name)} (${kind}: ${entry.members.map(displayName).join(", ")})\n`;
      }
      if ("host" in entry) return `${displayName(entry.name)} [host ${displayName(entry.host)}]${presence(entry, now)}\n`;
      const marks = `${entry.you ? " [you]" : ""}${entry.auto ? " [auto]" : ""}${entry.person ? " [person]" : ""}`;
      return `${displayName(entry.name)}${marks}${presence(entry, now)}\n`;
    };
    return output(entries, () => entries.map(line).join(""));
  },
});
