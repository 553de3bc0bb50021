import { runningMailman, servedStore, startedByText, stoppedByHand } from "../mailman/files.ts";
import { ok, problem, type Finding } from "./finding.ts";

/** `root`: the local root, where the pid file is; `store`: the label of the store in use (null when it cannot be opened). */
export function mailmanFindings(root: string | null, store: string | null): Finding[] {
  if (root === null) return [];
  const running = runningMailman(root);
  if (!running) {
    const stopped = stoppedByHand(root);
    const why =
      stopped === null
        ? "no mailman runs for this store (an agent's session start brings it up once agentmail's hooks are installed)"
        : `no mailman runs for this store: it was stopped by hand (agentmail mailman stop, ${stopped}), and agents' session starts leave it stopped`;
    return [problem("mailman", `${why}, so mail reaches agents only at their hooks, never while idle`, "agentmail mailman --daemon")];
  }
  const by = startedByText(running.started_by);
  const where = `pid ${running.pid} on ${running.host}, since ${running.started_at}${by === null ? "" : `, started ${by}`}`;
  if (store !== null && running.store !== store) {
    return [
      problem(
        "mailman",
        `the mailman here serves ${servedStore(running)} (${where}), not this store, so this store's mail reaches agents only at their hooks`,
        "agentmail mailman stop && agentmail mailman --daemon",
      ),
    ];
  }
  return [ok("mailman", `the mailman runs for this store (${where})`)];
}
