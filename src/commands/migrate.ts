import { defineCommand, stringArg } from "../cli/definitions.ts";
import { currentInvocation } from "../actions/context.ts";
import { migrate, type MigrationReport } from "../actions/migrate.ts";
import { displayName } from "../core/names.ts";
import { shellQuote } from "../hooks/hook-commands.ts";
import { printJson, writeStdout } from "../output/streams.ts";

const count = (n: number, one: string, many = `${one}s`) => `${n} ${n === 1 ? one : many}`;

/** What was copied, and that the source was left as it was and how to remove it. */
export function migrationText(report: MigrationReport, toServer: boolean): string {
  const verb = report.dry_run ? "would copy" : "copied";
  const what =
    `${count(report.messages, "message")} in ${count(report.mailboxes, "mailbox", "mailboxes")} (${report.archived} archived), ` +
    `${count(report.groups, "group")}, ${count(report.roles, "role")}, ${count(report.statuses, "status", "statuses")}`;
  const lines = [`${verb} ${what} from ${displayName(report.from)} to ${displayName(report.to)}; ${report.already} already there`];
  // The source is only read: removing it is for the user, once every agent uses the new store.
  if (!report.dry_run && toServer) {
    lines.push(`the file store is unchanged; once every agent uses the server, remove its mail: rm -r ${shellQuote(report.from)}`);
  } else if (!report.dry_run) {
    lines.push("the mail on the server is unchanged; once every agent uses the file store, delete it there (see the README, Moving mail)");
  }
  return lines.join("\n") + "\n";
}

export default defineCommand({
  meta: {
    name: "migrate",
    description: "Copy this repository's mail to the Redis store at URL, or back; exactly once, resumable, the source left as it was",
    examples: [
      "agentmail migrate --to redis://mail.example:6379 --dry-run",
      "agentmail migrate --to redis://mail.example:6379",
      "agentmail migrate --from redis://mail.example:6379 --json",
    ],
  },
  args: {
    to: { type: "string", valueHint: "url", description: "Copy the file store's mail to the Redis store at this URL" },
    from: { type: "string", valueHint: "url", description: "Copy the Redis store's mail at this URL to the file store" },
    "dry-run": { type: "boolean", description: "Count what would be copied, change nothing" },
  },
  async run({ args }) {
    const to = stringArg(args, "to");
    const report = await migrate(currentInvocation(), { to, from: stringArg(args, "from"), dryRun: args["dry-run"] === true });
    if (args.json === true) printJson(report);
    else writeStdout(migrationText(report, to !== undefined));
  },
});
