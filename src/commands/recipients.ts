import { defineCommand, output } from "../cli/definitions.ts";
import { whoIsCalling } from "../identity/caller.ts";
import { currentInvocation } from "../identity/invocation.ts";
import { addressBook } from "../identity/recipients.ts";
import { displayName } from "../mail/names.ts";

export default defineCommand({
  meta: {
    name: "recipients",
    description:
      "List whom you can send to: the windows of your tmux session (yours [you], names tmux chose [auto]), " +
      "agents on other hosts [host H], groups and roles",
    examples: ["agentmail recipients", "agentmail recipients --json"],
  },
  async run() {
    const entries = await addressBook(await whoIsCalling(currentInvocation(), "mail"));
    const line = (entry: (typeof entries)[number]) => {
      if ("members" in entry) {
        const kind = entry.name.startsWith("@") ? "group" : "role";
        return `${displayName(entry.name)} (${kind}: ${entry.members.map(displayName).join(", ")})\n`;
      }
      if ("host" in entry) return `${displayName(entry.name)} [host ${displayName(entry.host)}]\n`;
      return `${displayName(entry.name)}${entry.you ? " [you]" : ""}${entry.auto ? " [auto]" : ""}\n`;
    };
    return output(entries, () => entries.map(line).join(""));
  },
});
