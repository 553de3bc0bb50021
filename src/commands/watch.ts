import { defineCommand, output } from "../cli/definitions.ts";
import { currentInvocation } from "../identity/invocation.ts";
import { humanName } from "../actions/human.ts";
import { leaveRoom, openRoom, otherProjects } from "../actions/room.ts";
import { usageError } from "../mail/errors.ts";
import { displayName } from "../mail/names.ts";
import { terminalWidth } from "../output/terminal.ts";
// Statically, not lazily: as a chunk entry of its own it made the bundler split a module send loads into one more
// chunk (test/unit/room/lazy-load.test.ts). This command is its own chunk anyway.
import { WatchApp } from "../watch/app.ts";

export default defineCommand({
  meta: {
    name: "watch",
    description:
      "Watch the mail room live in a terminal: the agents, mail as it moves, threads; compose and reply as yourself " +
      "(--json streams its events, one JSON document a line)",
    examples: [
      "agentmail watch",
      "agentmail watch --once",
      "agentmail watch --json",
      "agentmail watch --all-projects",
      "AGENTMAIL_HUMAN=ana agentmail watch",
    ],
  },
  args: {
    once: { type: "boolean", description: "Print one snapshot (the agents and the newest mail) and exit" },
    limit: { type: "string", valueHint: "n", default: "20", description: "With --once: how many of the newest copies to list" },
    as: { type: "string", valueHint: "name", description: "Your name as a sender (default: $AGENTMAIL_HUMAN)" },
    "all-projects": {
      type: "boolean",
      description: "Show every project's agents and mail on the tmux servers, each with its project (write to name@project)",
    },
  },
  async run({ args, print }) {
    // Here --json chooses what watch does (a stream of events for a script instead of the screen), not only how a
    // result is printed: the one command that reads it.
    const json = args.json;
    const invocation = currentInvocation();
    const human = humanName(invocation, args.as);
    const limit = Number(args.limit);
    if (!Number.isInteger(limit) || limit < 1)
      throw usageError(`--limit takes a whole number of copies, 1 or more, not '${displayName(args.limit)}'`);
    if (!args.once && !json && !(process.stdin.isTTY && process.stdout.isTTY)) {
      throw usageError("watch draws on a terminal and this is none; run it in a tmux pane, or use --once or --json");
    }
    // The live view is where the person reads and writes: it registers them; a snapshot or a stream does not.
    const live = !args.once && !json;
    const projects = args["all-projects"] ? await otherProjects(invocation) : {};
    const room = await openRoom(invocation, human, { register: live, ...projects });
    const header = { store: room.store.description, human, copies: room.size };
    try {
      if (args.once) {
        const once = await import("../watch/once.ts");
        const colour = process.stdout.isTTY === true && !process.env.NO_COLOR;
        const text = () => once.snapshotText(room, header, limit, terminalWidth() ?? 120, colour);
        return await print(output(once.snapshotJson(room, header, limit), text));
      }
      const { restoreNormalJit } = await import("../cli/jit-policy.ts");
      restoreNormalJit();
      if (json) {
        const { streamEvents } = await import("../watch/once.ts");
        const stop = new Promise<void>((resolve) => {
          for (const signal of ["SIGTERM", "SIGHUP", "SIGINT"] as const) process.once(signal, () => resolve());
        });
        const { log } = await import("../output/log.ts");
        return await streamEvents(room, stop, 1_000, (message) => log.warn(message));
      }
      await new WatchApp(room, { invocation, human, store: header.store }).run();
    } finally {
      if (live) await leaveRoom(invocation, room, human);
      else room.close();
    }
  },
});
