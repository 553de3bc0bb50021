import { defineCommand } from "../cli/definitions.ts";
import { here } from "../actions/context.ts";
import { AgentmailError } from "../core/errors.ts";
import { terminalLine } from "../core/terminal-text.ts";
import { getStatus, parseAvailability, setStatus } from "../actions/status.ts";
import { printJson, writeStdout } from "../output/streams.ts";
import { AVAILABILITIES } from "../store/status.ts";

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
      const { name, status } = await getStatus(here());
      if (json) printJson(status ? { name, status: status.status, since: status.since, updated_at: status.updated_at } : { name, status: null });
      else if (status) writeStdout(`${status.status} since ${terminalLine(status.since)}\n`);
      else writeStdout("none (never set; the mailman treats it as ready)\n");
      return;
    }
    const availability = parseAvailability(state);
    let record;
    try {
      record = await setStatus(here(), availability);
    } catch (error) {
      // Hooks set the status on every turn and must never fail: outside tmux there is no one to set it for, and
      // outside a repository (a user-scope hook in any pane) there is no store to keep it in.
      if (error instanceof AgentmailError && (error.code === "not_in_tmux" || error.code === "no_store")) return json ? printJson(null) : undefined;
      throw error;
    }
    if (json) printJson({ name: record.name, status: record.status, since: record.since, updated_at: record.updated_at });
  },
});
