/**
 * Records which of a binary's bytecode the commands agents run on every turn use: `receive --hook`, `send` and
 * `receive`, each as a claimed `AGENTMAIL_NAME` and as a caller that asks tmux, in a private tmux server and a
 * throwaway repository. build.ts passes the files to the final build as `bytecodeOrder`, which puts that bytecode
 * together at the front of the executable, so those commands start faster (measured in the README, Benchmarks).
 * Run with BUN_BYTECODE_ORDER_OUT, each command writes one file; the most common way of starting comes first.
 */
import { join } from "node:path";
import { tempRepo } from "../test/support/repo.ts";
import { TmuxServer } from "../test/support/tmux-server.ts";

/** The recorded files, in the order the build should weigh them; throws if a command does not do its job. */
export function recordHotPath(binary: string, outDir: string): string[] {
  const repo = tempRepo("agentmail-profile-");
  const server = TmuxServer.start(["sender", "receiver"], repo.dir);
  try {
    const files: string[] = [];
    const run = (label: string, argv: string[], agent: string, named: boolean): void => {
      const env = named ? server.named(agent) : server.agent(agent).env;
      const out = join(outDir, `${label}.txt`);
      const result = Bun.spawnSync([binary, ...argv], { env: { ...env, BUN_BYTECODE_ORDER_OUT: out }, cwd: repo.dir });
      if (result.exitCode !== 0) throw new Error(`${label}: exit ${result.exitCode}: ${result.stderr.toString().trim()}`);
      files.push(out);
    };
    // Not recorded: the claims are made once, at session start.
    server.claimNames(binary, ["sender", "receiver"], repo.dir);
    run("hook-named", ["receive", "--hook"], "receiver", true);
    run("hook", ["receive", "--hook"], "receiver", false);
    run("send-named", ["send", "receiver", "one"], "sender", true);
    run("send", ["send", "receiver", "two"], "sender", false);
    run("receive-named", ["receive"], "receiver", true);
    run("receive", ["receive"], "receiver", false);
    return files;
  } finally {
    server.stop();
    repo.remove();
  }
}
