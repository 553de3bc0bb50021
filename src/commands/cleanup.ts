import { defineCommand, numberArg } from "../cli/definitions.ts";
import { cleanup, type CleanupReport } from "../actions/cleanup.ts";
import { here } from "../actions/context.ts";
import { displayName } from "../core/names.ts";
import { log } from "../output/log.ts";
import { printJson, writeStdout } from "../output/streams.ts";

function describe(report: CleanupReport): string {
  const would = report.dry_run ? "would " : "";
  const lines = [
    ...report.forgotten.map((entry) => `${would}forget status of ${displayName(entry.name)} (${entry.reason})`),
    ...report.dropped.map((entry) => `${would}drop ${entry.count} read message${entry.count === 1 ? "" : "s"} from ${displayName(entry.name)}`),
    ...report.removed.map((name) => `${would}remove empty mailbox ${displayName(name)}`),
  ];
  return lines.length > 0 ? lines.join("\n") + "\n" : "Nothing to clean up\n";
}

export default defineCommand({
  meta: {
    name: "cleanup",
    description: "Forget stale agents, drop old read messages, remove empty mailboxes",
    examples: ["agentmail cleanup --dry-run", "agentmail cleanup --read-hours 24", "agentmail cleanup --json"],
  },
  args: {
    "stale-hours": { type: "string", valueHint: "hours", default: "48", description: "Forget statuses not updated for this long" },
    "read-hours": { type: "string", valueHint: "hours", default: "2", description: "Drop read messages older than this" },
    "dry-run": { type: "boolean", description: "Report what a real run would do, change nothing" },
  },
  async run({ args }) {
    const json = args.json === true;
    const report = await cleanup(here(), {
      staleHours: numberArg("--stale-hours", args["stale-hours"], "hours"),
      readHours: numberArg("--read-hours", args["read-hours"], "hours"),
      dryRun: args["dry-run"] === true,
    });
    if (!report.windows_checked) log.warn("tmux could not be asked which windows exist; statuses were judged by --stale-hours only");
    if (json) printJson(report);
    else writeStdout(describe(report));
  },
});
