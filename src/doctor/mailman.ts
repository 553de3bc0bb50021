import { runningMailman } from "../store/mailman-files.ts";
import { ok, problem, type Finding } from "./finding.ts";

export function mailmanFindings(root: string | null): Finding[] {
  if (root === null) return [];
  const running = runningMailman(root);
  if (!running)
    return [problem("mailman", "no mailman runs for this store, so no agent is reminded of mail", "agentmail mailman --daemon")];
  return [ok("mailman", `the mailman runs for this store (pid ${running.pid} on ${running.host}, since ${running.started_at})`)];
}
