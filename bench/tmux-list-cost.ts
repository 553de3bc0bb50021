/**
 * What listing every window of the server (`list-windows -a`, needed to see a name used in another session) costs
 * against listing the caller's session only, in the caller lookup's one tmux call. A private tmux server with 16
 * windows in 3 sessions; 300 interleaved runs of each variant after 10 warm-ups; medians.
 *
 * Run: node_modules/.bin/bun bench/tmux-list-cost.ts
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

const ROUNDS = 300;
const WARMUP = 10;

const dir = mkdtempSync(join(tmpdir(), "agentmail-tmux-cost-"));
const socket = join(dir, "sock");
const tmux = (args: string[]) => Bun.spawnSync(["tmux", "-S", socket, "-f", "/dev/null", ...args]).stdout.toString();

tmux(["new-session", "-d", "-s", "a", "-n", "w0", "sleep 1000"]);
for (let i = 1; i < 8; i++) tmux(["new-window", "-d", "-t", "a:", "-n", `w${i}`, "sleep 1000"]);
for (const session of ["b", "c"]) {
  tmux(["new-session", "-d", "-s", session, "-n", "x", "sleep 1000"]);
  for (let i = 0; i < 3; i++) tmux(["new-window", "-d", "-t", `${session}:`, "-n", `y${i}`, "sleep 1000"]);
}
const pane = tmux(["display-message", "-p", "-t", "a:w3", "#{pane_id}"]).trim();

const self = ["display-message", "-p", "-t", pane, "M#{session_id}\t#{window_id}\t#{window_name}"];
const variants: Record<string, string[]> = {
  "display-message alone": self,
  "+ list-windows -t <pane>": [
    ...self,
    ";",
    "list-windows",
    "-t",
    pane,
    "-F",
    "M#{window_id}\t#{window_active}\t#{pane_id}\t#{window_name}",
  ],
  "+ list-windows -a": [
    ...self,
    ";",
    "list-windows",
    "-a",
    "-F",
    "M#{session_id}\t#{session_name}\t#{window_id}\t#{window_active}\t#{pane_id}\t#{window_name}",
  ],
};

async function timed(args: string[]): Promise<number> {
  const start = performance.now();
  const child = Bun.spawn(["tmux", "-S", socket, ...args], { stdout: "pipe", stderr: "ignore" });
  await new Response(child.stdout).text();
  await child.exited;
  return performance.now() - start;
}

const samples = new Map<string, number[]>(Object.keys(variants).map((name) => [name, []]));
for (let round = 0; round < WARMUP + ROUNDS; round++) {
  for (const [name, args] of Object.entries(variants)) {
    const ms = await timed(args);
    if (round >= WARMUP) samples.get(name)!.push(ms);
  }
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[values.length >> 1]!;
const report = [...samples].map(([name, values]) => `${name} ${median(values).toFixed(2)} ms`).join("; ");
console.log(`16 windows in 3 sessions, ${ROUNDS} interleaved runs, medians: ${report}`);
tmux(["kill-server"]);
rmSync(dir, { recursive: true, force: true });
