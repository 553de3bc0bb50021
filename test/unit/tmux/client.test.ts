/**
 * A tmux server that hangs (stopped: a paused VM, a suspended job) keeps its socket and answers nothing. Every tmux
 * call gives up after 5 s, so a command run in one of its panes fails with exit 2 and says what to check, rather than
 * hang with it; the server, once continued, answers again.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { tmux } from "../../../src/tmux/client.ts";
import { runInProcess } from "../../support/in-process.ts";
import { tempRepo } from "../../support/repo.ts";
import { TmuxServer } from "../../support/tmux-server.ts";

let server: TmuxServer;
let repo: ReturnType<typeof tempRepo>;

beforeAll(() => {
  repo = tempRepo();
  server = TmuxServer.start(["alice"], repo.dir);
});
afterAll(() => {
  server.stop();
  repo.remove();
});

/** Runs `work` while the server is stopped, bounded so that a call that never returns fails as a timeout. */
async function whileStopped<T>(work: () => Promise<T>): Promise<T | "timed out after 20 s"> {
  const pid = Number(server.agent("alice").env.TMUX!.split(",")[1]);
  process.kill(pid, "SIGSTOP");
  try {
    return await Promise.race([work(), Bun.sleep(20_000).then(() => "timed out after 20 s" as const)]);
  } finally {
    process.kill(pid, "SIGCONT");
  }
}

test("a command in a pane of a hung tmux server fails within the timeout with exit 2, saying to check the server", async () => {
  const { env } = server.agent("alice");
  const received = await whileStopped(() =>
    runInProcess(["receive"], { env: { TMUX: env.TMUX, TMUX_PANE: env.TMUX_PANE }, cwd: repo.dir }),
  );
  expect(received).toEqual({
    code: 2,
    stdout: "",
    stderr: "error: tmux did not answer within 5 s; check that the tmux server is alive\n",
  });
  expect(await runInProcess(["receive"], { env: { TMUX: env.TMUX, TMUX_PANE: env.TMUX_PANE }, cwd: repo.dir })).toEqual({
    code: 0,
    stdout: "No unread messages\n",
    stderr: "",
  });
}, 60_000);

test("a tmux call to a hung server is not taken for an empty answer", async () => {
  const { env } = server.agent("alice");
  const asked = await whileStopped(() => tmux(["display-message", "-p", "#{pane_id}"], env).catch((error: Error) => error.message));
  expect(asked).toBe("tmux did not answer within 5 s; check that the tmux server is alive");
  expect((await tmux(["display-message", "-p", "-t", env.TMUX_PANE!, "#{pane_id}"], env)).stdout).toBe(`${env.TMUX_PANE}\n`);
}, 60_000);
