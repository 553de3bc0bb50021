import { currentInvocation } from "../identity/invocation.ts";
import { findingLine, runDoctor } from "../actions/doctor.ts";
import { defineCommand, output } from "../cli/definitions.ts";

export default defineCommand({
  meta: {
    name: "doctor",
    description: "Check the store, tmux, the mailman and the agents' hooks; each problem comes with the command that fixes it",
    examples: ["agentmail doctor", "agentmail doctor --fix", "agentmail doctor --json"],
  },
  args: {
    fix: { type: "boolean", description: "Make the safe repairs: stale locks, stray temp files, cursors receive would not use" },
  },
  async run({ args }) {
    const report = await runDoctor(currentInvocation(), args.fix);
    return output(report, () => report.findings.map(findingLine).join(""), { exitCode: report.ok ? 0 : 1 });
  },
});
