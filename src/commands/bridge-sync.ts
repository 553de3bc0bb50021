import { syncOnce } from "../actions/bridge.ts";
import { currentInvocation } from "../actions/context.ts";
import { startProgress } from "../output/progress.ts";
import { printJson, writeStdout } from "../output/streams.ts";
import { defineCommand } from "../cli/definitions.ts";

export default defineCommand({
  meta: {
    name: "sync",
    description: "One pass both ways: import what peers left for agents, write queued Roo messages; print what happened",
    examples: ["agentmail bridge sync", "agentmail bridge sync --json"],
  },
  async run({ args }) {
    const json = args.json === true;
    const progress = await startProgress("bridge sync", { steps: "files" });
    const report = await syncOnce(currentInvocation(), progress).finally(() => progress.end());
    const { exportedLine, importedLine, leftLine, summaryLine } = await import("../bridges/report-lines.ts");
    if (json) {
      return printJson({
        bridges: report.bridges.map((bridge) => ({
          name: bridge.name,
          kind: bridge.kind,
          imported: bridge.imported.length,
          exported: bridge.exported.length,
          queued: bridge.queued,
          others: bridge.others,
          left: bridge.left.map(({ file, reason }) => ({ file, reason })),
        })),
        deferred: report.deferred,
      });
    }
    const lines: string[] = [];
    for (const bridge of report.bridges) {
      for (const entry of bridge.imported) lines.push(importedLine(bridge.name, entry));
      for (const entry of bridge.exported) lines.push(exportedLine(bridge.name, entry));
      for (const entry of bridge.left) lines.push(leftLine(entry));
      lines.push(summaryLine(bridge));
    }
    if (report.bridges.length === 0) lines.push("No bridges; add one with 'agentmail bridge add feat124|roo|dmail|claude-team'");
    if (report.deferred > 0) lines.push(`${report.deferred} still being written; a later sync imports them`);
    writeStdout(lines.map((line) => line + "\n").join(""));
  },
});
