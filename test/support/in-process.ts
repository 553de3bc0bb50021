/**
 * Runs the CLI's dispatcher inside the test process (so coverage counts it) as if it ran in an agent's pane:
 * TMUX, TMUX_PANE and the working directory are set for the call, stdout and stderr are captured.
 */
import { dispatch } from "../../src/dispatch.ts";
import { setSink } from "../../src/output/streams.ts";

export interface Captured {
  code: number;
  stdout: string;
  stderr: string;
}

export async function runInProcess(argv: string[], options: { env?: Record<string, string | undefined>; cwd?: string } = {}): Promise<Captured> {
  const saved = { ...process.env };
  const savedCwd = process.cwd();
  let stdout = "";
  let stderr = "";
  setSink({ stdout: (text) => void (stdout += text), stderr: (text) => void (stderr += text) });
  for (const key of ["TMUX", "TMUX_PANE", "AGENTMAIL_DIR"]) delete process.env[key];
  Object.assign(process.env, options.env ?? {});
  if (options.cwd) process.chdir(options.cwd);
  try {
    const code = await dispatch(argv);
    return { code, stdout, stderr };
  } finally {
    setSink(null);
    process.chdir(savedCwd);
    for (const key of Object.keys(process.env)) if (!(key in saved)) delete process.env[key];
    Object.assign(process.env, saved);
  }
}
