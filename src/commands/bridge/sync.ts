import { syncOnce, syncReportLines } from "../../actions/bridge.ts";
import { currentInvocation } from "../../identity/invocation.ts";
import { startProgress } from "../../output/progress.ts";
import { defineCommand, output } from "../../cli/definitions.ts";

export default defineCommand({
  meta: {
    name: "sync",
    description: "One pass both ways: import what peers left for agents, write queued Roo messages; print what happened",
    examples: ["agentmail bridge sync", "agentmail bridge sync --json"],
  },
  async run() {
    const progress = await startProgress("bridge sync", { steps: "files" });
    const report = await syncOnce(currentInvocation(), progress).finally(() => progress.end());
    const json = {
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
    };
    return output(json, async () => (await syncReportLines(report)).map((line) => line + "\n").join(""));
  },
});
