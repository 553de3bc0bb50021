import { defineCommand } from "../cli/definitions.ts";
import { displayName } from "../core/names.ts";
import { printJson, writeStdout } from "../output/streams.ts";
import { resolveCaller } from "../tmux/caller.ts";

export function onboardingText(name: string | null): string {
  const you = name === null ? "You are not inside tmux now, so you cannot send or receive here." : `You are "${displayName(name)}" (the name of your tmux window).`;
  return `# agentmail: mail between the agents in this tmux session
${you}
Other agents work in the other windows of this session; each window name is an address.

agentmail recipients                  list who you can write to (yours is marked [you])
agentmail send <name> "<message>"     send; prints the message id
agentmail send <name> < notes.md      send a longer message from stdin
agentmail receive                     show your oldest unread message and mark it read
agentmail receive --wait 300          wait up to 300 s for a message when none is unread
agentmail status ready|work|offline   tell the mailman whether to remind you of mail

Statuses: ready = idle, remind me of new mail; work = busy, do not interrupt;
offline = gone. Hooks usually set them for you.
When a line like "You have 2 unread agentmail messages" appears, run: agentmail receive
Every command takes --json and --help. Exit 2 means you are not inside tmux.
`;
}

export default defineCommand({
  meta: { name: "onboard", description: "Print a short text that teaches an agent to use agentmail" },
  async run({ args }) {
    const json = args.json === true;
    let name: string | null = null;
    try {
      name = (await resolveCaller()).name;
    } catch {
      name = null;
    }
    if (json) printJson({ name, text: onboardingText(name) });
    else writeStdout(onboardingText(name));
  },
});
