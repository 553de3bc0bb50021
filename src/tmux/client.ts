import { notInTmux } from "../mail/errors.ts";

export interface TmuxResult {
  code: number;
  stdout: string;
  stderr: string;
}

/** A tmux server that does not answer in this long is treated as no tmux at all. */
const TMUX_TIMEOUT_MS = 5_000;

interface Reader {
  read(): Promise<{ done: boolean; value?: Uint8Array }>;
}

async function textOf(reader: Reader): Promise<string> {
  const decoder = new TextDecoder();
  let text = "";
  for (;;) {
    const { done, value } = await reader.read();
    if (done) return text + decoder.decode();
    text += decoder.decode(value, { stream: true });
  }
}

/**
 * Runs one tmux client call. Arguments go to tmux as an argv array, never through a shell; the socket comes from
 * the inherited $TMUX, so the caller's own server answers.
 *
 * The timeout is kept here, not by spawn's: a tmux client ends with exit 0 on SIGTERM (so a timed-out call would look
 * like an empty answer), and it hands its stdout to the server, so a server that hangs (stopped, swapped out) holds
 * the pipe open after the client is gone: waiting for its end would wait for ever.
 */
export async function tmux(args: readonly string[], env: Record<string, string | undefined> = process.env): Promise<TmuxResult> {
  let child: Bun.Subprocess<"ignore", "pipe", "pipe">;
  try {
    child = Bun.spawn(["tmux", ...args], { env, stdin: "ignore", stdout: "pipe", stderr: "pipe" });
  } catch (error) {
    throw notInTmux(`cannot run tmux (${(error as NodeJS.ErrnoException).code ?? error})`, "installTmux");
  }
  const readers = [child.stdout.getReader(), child.stderr.getReader()] as const;
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<null>((resolve) => {
    timer = setTimeout(() => resolve(null), TMUX_TIMEOUT_MS);
  });
  const answer = await Promise.race([Promise.all([textOf(readers[0]), textOf(readers[1]), child.exited]), late]);
  clearTimeout(timer);
  if (answer === null) {
    child.kill("SIGKILL");
    for (const reader of readers) reader.cancel().catch(() => {});
    throw notInTmux(`tmux did not answer within ${TMUX_TIMEOUT_MS / 1000} s; check that the tmux server is alive`);
  }
  const [stdout, stderr, code] = answer;
  return { code, stdout, stderr };
}
