/**
 * Runs the command line inside the test process (so coverage counts it) as if it ran in an agent's pane:
 * TMUX, TMUX_PANE and the working directory are set for the call, stdout and stderr are captured.
 */
import type { CommandDef } from "citty";
import { run } from "../../src/cli/run.ts";
import { main } from "../../src/commands/index.ts";
import { setSink } from "../../src/output/streams.ts";

export interface Captured {
  code: number;
  stdout: string;
  stderr: string;
}

interface Options {
  env?: Record<string, string | undefined>;
  cwd?: string;
  /** Another command tree than agentmail's own. */
  tree?: CommandDef<any>;
  /** Sees stdout as it is written: for a command that serves until stopped (web, watch --json). */
  onStdout?: (text: string) => void;
}

export async function runInProcess(argv: string[], options: Options = {}): Promise<Captured> {
  return callInProcess(() => (options.tree ? run(options.tree, argv) : main(argv)), options);
}

/**
 * Calls a command's own function the way runInProcess runs the command line (environment, working directory, captured
 * output): for what the command line cannot hand it in process, such as a hook's input on stdin.
 */
export async function callInProcess(work: () => Promise<number>, options: Omit<Options, "tree"> = {}): Promise<Captured> {
  const saved = { ...process.env };
  const savedCwd = process.cwd();
  let stdout = "";
  let stderr = "";
  setSink({
    stdout: (text) => {
      stdout += text;
      options.onStdout?.(text);
    },
    stderr: (text) => void (stderr += text),
  });
  for (const key of ["TMUX", "TMUX_PANE", "AGENTMAIL_DIR", "AGENTMAIL_NAME", "AGENTMAIL_URL", "AGENTMAIL_NAMESPACE", "AGENTMAIL_HOST"])
    delete process.env[key];
  Object.assign(process.env, options.env ?? {});
  if (options.cwd) process.chdir(options.cwd);
  try {
    const code = await work();
    return { code, stdout, stderr };
  } finally {
    setSink(null);
    process.chdir(savedCwd);
    for (const key of Object.keys(process.env)) if (!(key in saved)) delete process.env[key];
    Object.assign(process.env, saved);
  }
}
