import { defineCommand, output } from "../cli/definitions.ts";
import { cleanup, type CleanupReport } from "../actions/cleanup.ts";
import { currentInvocation } from "../identity/invocation.ts";
import { EXIT_FAILURE, EXIT_OK } from "../mail/errors.ts";
import { displayName } from "../mail/names.ts";
import { log } from "../output/log.ts";
import { megabytes, startProgress } from "../output/progress.ts";

/** One line per thing done, in the past tense; a dry run says what it would do in the same words. */
function reportLines(report: CleanupReport): string {
  const verb = (dry: string, done: string) => (report.dry_run ? `would ${dry}` : done);
  const messages = (count: number, kind: string) => `${count} ${kind} ${count === 1 ? "message" : "messages"}`;
  const lines = [
    ...report.bounced.map(
      (entry) => `${verb("return", "returned")} ${entry.id} of ${displayName(entry.name)} to ${displayName(entry.to)} (${entry.reason})`,
    ),
    ...report.forwarded.map((entry) => `sent on the bounce ${entry.id} kept here for ${displayName(entry.name)}`),
    ...report.waiting.map((entry) => `still keeping the bounce ${entry.id} for ${displayName(entry.name)}: ${entry.why}`),
    ...report.forgotten.map((entry) => `${verb("forget", "forgot")} status of ${displayName(entry.name)} (${entry.reason})`),
    ...report.archived.map((entry) => `${verb("archive", "archived")} ${messages(entry.count, "read")} of ${displayName(entry.name)}`),
    ...report.removed.map((name) => `${verb("remove", "removed")} empty mailbox ${displayName(name)}`),
    ...report.purged.map((entry) => `${verb("purge", "purged")} ${messages(entry.count, "archived")} of ${displayName(entry.name)}`),
    ...report.claims.map(
      (claim) => `${verb("remove", "removed")} the claim on ${displayName(claim.path)} of ${displayName(claim.holder)} (${claim.why})`,
    ),
  ];
  if (lines.length > 0) return lines.join("\n") + "\n";
  return report.failed.length > 0 || report.claims_failed ? "" : "Nothing to clean up\n";
}

export default defineCommand({
  meta: {
    name: "cleanup",
    description:
      "Return dead letters to their senders, forget stale agents, archive old read messages, remove empty mailboxes and ended claims, purge old archived mail",
    examples: [
      "agentmail cleanup --dry-run",
      "agentmail cleanup --read-hours 24",
      "agentmail cleanup --purge-days 30 --dry-run",
      "agentmail cleanup --json",
    ],
  },
  args: {
    "stale-hours": {
      type: "string",
      unit: "hours",
      valueHint: "hours",
      default: "48",
      description: "Forget statuses not updated for this long",
    },
    "read-hours": { type: "string", unit: "hours", valueHint: "hours", default: "2", description: "Archive read messages older than this" },
    "purge-days": {
      type: "string",
      unit: "days",
      valueHint: "days",
      description: "Delete archived messages older than this (left out: keep them)",
    },
    "gone-hours": {
      type: "string",
      unit: "hours",
      valueHint: "hours",
      description: "Return unread mail of agents gone this long to its senders (left out: AGENTMAIL_GONE_AFTER, else 24; 0: never)",
    },
    "dry-run": { type: "boolean", description: "Report what a real run would do, change nothing" },
  },
  async run({ args }) {
    const options = {
      staleHours: args["stale-hours"],
      readHours: args["read-hours"],
      purgeDays: args["purge-days"] ?? null,
      goneHours: args["gone-hours"] ?? null,
      dryRun: args["dry-run"],
    };
    const progress = await startProgress("cleanup", { steps: "mailboxes", items: "MB read" });
    const report = await cleanup(currentInvocation(), { ...options, progress: megabytes(progress) }).finally(() => progress.end());
    if (!report.windows_checked) log.warn("tmux could not be asked which windows exist; statuses were judged by --stale-hours only");
    return output(report, () => reportLines(report), {
      // Reported after what was done, one line each (--json holds them in the report).
      afterText() {
        for (const failure of report.failed) log.error(`mailbox ${displayName(failure.name)} was not cleaned: ${failure.message}`);
        if (report.claims_failed) log.error(`the claims were not cleaned: ${report.claims_failed.message}`);
      },
      // Not everything could be done.
      exitCode: report.failed.length > 0 || report.claims_failed ? EXIT_FAILURE : EXIT_OK,
    });
  },
});
