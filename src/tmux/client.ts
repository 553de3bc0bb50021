import { notInTmux } from "../mail/errors.ts";

export interface TmuxResult {
  code: number;
  stdout: string;
  stderr: string;
}

/** A tmux server that does not answer in this long is treated as no tmux at all. */
const TMUX_TIMEOUT_MS = 5_000;

/**
 * Runs one tmux client call. Arguments go to tmux as an argv array, never through a shell; the socket comes from
 * the inherited $TMUX, so the caller's own server answers.
 */
export async function tmux(args: readonly string[], env: Record<string, string | undefined> = process.env): Promise<TmuxResult> {
  let child: Bun.Subprocess<"ignore", "pipe", "pipe">;
  try {
    child = Bun.spawn(["tmux", ...args], {
      env,
      stdin: "ignore",
      stdout: "pipe",
      stderr: "pipe",
      timeout: TMUX_TIMEOUT_MS,
    });
  } catch (error) {
    throw notInTmux(`cannot run tmux (${(error as NodeJS.ErrnoException).code ?? error})`, "installTmux");
  }
  const [stdout, stderr, code] = await Promise.all([new Response(child.stdout).text(), new Response(child.stderr).text(), child.exited]);
  if (child.signalCode) throw notInTmux(`tmux did not answer within ${TMUX_TIMEOUT_MS / 1000} s; check that the tmux server is alive`);
  return { code, stdout, stderr };
}
