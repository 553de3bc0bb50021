import { defineCommand, output } from "../cli/definitions.ts";
import { currentInvocation } from "../identity/invocation.ts";
import { hookInvocation } from "../identity/hook-invocation.ts";
import { hookStdin } from "./_hook-input.ts";
import { AgentmailError } from "../mail/errors.ts";
import { terminalLine } from "../mail/terminal-text.ts";
import { getStatus, parseAvailability, setStatus, STATUS_ARGUMENTS } from "../actions/status.ts";
import { writeStderr } from "../output/streams.ts";
import { stderrIsTerminal } from "../output/terminal.ts";
import { AVAILABILITIES } from "../mail/agents.ts";

/** Said only to a person at a terminal: hooks set the status on every turn, and their output must stay empty. */
async function tellPerson(text: string): Promise<void> {
  if (await stderrIsTerminal()) writeStderr(text);
}

export default defineCommand({
  meta: {
    name: "status",
    description: "Set or show your availability: ready (remind me of mail), work (busy), offline",
    examples: ["agentmail status ready", "agentmail status", "agentmail status --json"],
  },
  args: {
    state: {
      type: "positional",
      required: false,
      valueHint: "status",
      options: [...AVAILABILITIES],
      description: STATUS_ARGUMENTS.status,
    },
  },
  async run({ args }) {
    const state = args.state;
    if (state === undefined) {
      const { name, status } = await getStatus(currentInvocation());
      const json = status ? { name, status: status.status, since: status.since, updated_at: status.updated_at } : { name, status: null };
      return output(json, () =>
        status ? `${status.status} since ${terminalLine(status.since)}\n` : "none (never set; the mailman treats it as ready)\n",
      );
    }
    const availability = parseAvailability(state);
    // Hooks set it: in Codex's app-server daemon, for the pane whose thread it is, or for nobody when none can be told.
    const invocation = await hookInvocation(hookStdin);
    if (invocation === null) return output(null, "");
    let record: Awaited<ReturnType<typeof setStatus>>;
    try {
      record = await setStatus(invocation, availability);
    } catch (error) {
      // Hooks set the status on every turn and must never fail: outside tmux there is no one to set it for, and
      // outside a repository (a user-scope hook in any pane) there is no store to keep it in.
      if (error instanceof AgentmailError && (error.code === "not_in_tmux" || error.code === "no_store")) {
        return output(null, "", { afterText: () => tellPerson(`status: not set: ${terminalLine(error.message)}\n`) });
      }
      throw error;
    }
    const json = { name: record.name, status: record.status, since: record.since, updated_at: record.updated_at };
    return output(json, "", { afterText: () => tellPerson(`status: ${record.status}\n`) });
  },
});
