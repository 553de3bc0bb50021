/**
 * Why a window-renamed hook cannot keep a pane's name true (README, AGENTMAIL_NAME): tmux runs a hook's command after
 * the command that fired it has returned. In a private tmux server, a window-renamed hook that takes a second is set
 * on a window, the window is renamed, and the script prints when rename-window returned, the window's name right
 * then, and when the hook finished.
 *
 *   node_modules/.bin/bun bench/rename-hook.ts
 */
import { existsSync, mkdtempSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { TmuxServer } from "../test/support/tmux-server.ts";

const dir = mkdtempSync(join(tmpdir(), "agentmail-rename-hook-"));
const server = TmuxServer.start(["alice"], dir);
const marker = join(dir, "hook-done");
try {
  const { windowId, paneId } = server.agent("alice");
  server.run(["set-hook", "-t", windowId, "window-renamed", `run-shell "sleep 1; touch '${marker}'"`]);
  const start = performance.now();
  server.run(["rename-window", "-t", windowId, "carol"]);
  const returned = performance.now() - start;
  const hookDone = existsSync(marker);
  const name = server.run(["display-message", "-p", "-t", paneId, "#W"]).trim();
  while (!existsSync(marker) && performance.now() - start < 5000) await Bun.sleep(10);
  const finished = existsSync(marker) ? (statSync(marker).mtimeMs - (performance.timeOrigin + start)).toFixed(0) : "never (5 s)";
  console.log(
    `rename-window returned in ${returned.toFixed(1)} ms; the hook had finished then: ${hookDone}; ` +
      `the window's name then: ${name}; the hook finished after ${finished} ms`,
  );
} finally {
  server.stop();
  rmSync(dir, { recursive: true, force: true });
}
