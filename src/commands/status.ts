import { defineCommand } from "../cli/definitions.ts";
import { currentInvocation } from "../actions/context.ts";
import { hookInvocation } from "../actions/hook-invocation.ts";
import { AgentmailError } from "../core/errors.ts";
import { terminalLine } from "../core/terminal-text.ts";
import { getStatus, parseAvailability, setStatus } from "../actions/status.ts";
import { printJson, writeStderr, writeStdout } from "../output/streams.ts";
import { stderrIsTerminal } from "../output/terminal.ts";
import { AVAILABILITIES } from "../core/availability.ts";

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
      description: "The status to set; leave out to print the current one",
    },
  },
  async run({ args }) {
    const json = args.json === true;
    const state = args.state;
    if (state === undefined) {
      const { name, status } = await getStatus(currentInvocation());
      if (json)
        printJson(status ? { name, status: status.status, since: status.since, updated_at: status.updated_at } : { name, status: null });
      else if (status) writeStdout(`${status.status} since ${terminalLine(status.since)}\n`);
      else writeStdout("none (never set; the mailman treats it as ready)\n");
      return;
    }
    const availability = parseAvailability(state);
    // Hooks set it: in Codex's app-server daemon, for the pane whose thread it is, or for nobody when none can be told.
    const invocation = await hookInvocation();
    if (invocation === null) {
      if (json) printJson(null);
      return;
    }
    let record: Awaited<ReturnType<typeof setStatus>>;
    try {
      record = await setStatus(invocation, availability);
    } catch (error) {
      // Hooks set the status on every turn and must never fail: outside tmux there is no one to set it for, and
      // outside a repository (a user-scope hook in any pane) there is no store to keep it in.
      if (error instanceof AgentmailError && (error.code === "not_in_tmux" || error.code === "no_store")) {
        if (json) printJson(null);
        else await tellPerson(`status: not set: ${terminalLine(error.message)}\n`);
        return;
      }
      throw error;
    }
    if (json) printJson({ name: record.name, status: record.status, since: record.since, updated_at: record.updated_at });
    else await tellPerson(`status: ${record.status}\n`);
  },
});
