import { cleanup, type CleanupReport } from "../actions/cleanup.ts";
import { here } from "../actions/context.ts";
import { AgentmailError, EXIT_FAILURE, EXIT_OK } from "../core/errors.ts";
import { displayName } from "../core/names.ts";
import { log } from "../output/log.ts";
import { printJson, writeStdout } from "../output/streams.ts";
import { defineCommand, stringArg } from "./command.ts";

function hours(value: string | undefined, flag: string, fallback: number): number {
  if (value === undefined) return fallback;
  const number = Number(value);
  if (value.trim() === "" || !Number.isFinite(number) || number < 0) throw new AgentmailError("usage", `${flag} takes a number of hours, not '${displayName(value)}'`);
  return number;
}

function days(value: string | undefined): number | null {
  if (value === undefined) return null;
  const number = Number(value);
  if (value.trim() === "" || !Number.isFinite(number) || number < 0) {
    throw new AgentmailError("usage", `--purge-days takes a number of days, not '${displayName(value)}'`);
  }
  return number;
}

function describe(report: CleanupReport): string {
  const would = report.dry_run ? "would " : "";
  const messages = (count: number) => `${count} ${count === 1 ? "message" : "messages"}`;
  const lines = [
    ...report.forgotten.map((entry) => `${would}forget status of ${displayName(entry.name)} (${entry.reason})`),
    ...report.archived.map((entry) => `${would}archive ${messages(entry.count).replace(" ", " read ")} of ${displayName(entry.name)}`),
    ...report.removed.map((name) => `${would}remove empty mailbox ${displayName(name)}`),
    ...report.purged.map((entry) => `${would}purge ${messages(entry.count).replace(" ", " archived ")} of ${displayName(entry.name)}`),
  ];
  if (lines.length > 0) return lines.join("\n") + "\n";
  return report.failed.length > 0 ? "" : "Nothing to clean up\n";
}

export default defineCommand({
  meta: { name: "cleanup", description: "Forget stale agents, archive old read messages, remove empty mailboxes, purge old archived mail" },
  args: {
    "stale-hours": { type: "string", valueHint: "hours", description: "Forget statuses not updated for this long (default 48)" },
    "read-hours": { type: "string", valueHint: "hours", description: "Archive read messages older than this (default 2)" },
    "purge-days": { type: "string", valueHint: "days", description: "Delete archived messages older than this (default: keep them)" },
    "dry-run": { type: "boolean", description: "Report what a real run would do, change nothing" },
  },
  examples: [
    "agentmail cleanup --dry-run",
    "agentmail cleanup --read-hours 24",
    "agentmail cleanup --purge-days 30 --dry-run",
    "agentmail cleanup --json",
  ],
  async run({ args, json }) {
    const report = await cleanup(here(), {
      staleHours: hours(stringArg(args, "stale-hours"), "--stale-hours", 48),
      readHours: hours(stringArg(args, "read-hours"), "--read-hours", 2),
      purgeDays: days(stringArg(args, "purge-days")),
      dryRun: args["dry-run"] === true,
    });
    if (!report.windows_checked) log.warn("tmux could not be asked which windows exist; statuses were judged by --stale-hours only");
    if (json) printJson(report);
    else writeStdout(describe(report));
    // Reported after what was done, one line each; the exit code says that not everything could be done.
    if (!json) for (const failure of report.failed) log.error(`mailbox ${displayName(failure.name)} was not cleaned: ${failure.message}`);
    return report.failed.length > 0 ? EXIT_FAILURE : EXIT_OK;
  },
});
