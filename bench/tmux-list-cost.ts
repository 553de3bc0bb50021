/**
 * What listing every window of the server (list-windows -a, needed to see a name used in another session) costs
 * against listing the caller's session only, in the caller lookup's one tmux call. Private tmux server, 16 windows
 * in 3 sessions, 300 interleaved runs. Run: node_modules/.bin/bun bench/tmux-list-cost.ts
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
const dir = mkdtempSync(join(tmpdir(), "safety-tmuxcost-"));
const S = join(dir, "sock");
const t = (args: string[]) => Bun.spawnSync(["tmux", "-S", S, "-f", "/dev/null", ...args]);
t(["new-session", "-d", "-s", "a", "-n", "w0", "sleep 1000"]);
for (let i = 1; i < 8; i++) t(["new-window", "-d", "-t", "a:", "-n", `w${i}`, "sleep 1000"]);
for (const s of ["b", "c"]) { t(["new-session", "-d", "-s", s, "-n", "x", "sleep 1000"]); for (let i = 0; i < 3; i++) t(["new-window", "-d", "-t", `${s}:`, "-n", `y${i}`, "sleep 1000"]); }
const pane = t(["display-message", "-p", "-t", "a:w3", "#{pane_id}"]).stdout.toString().trim();
const F1 = "M#{window_id}\t#{window_active}\t#{pane_id}\t#{window_name}";
const F2 = "M#{session_id}\t#{session_name}\t#{window_id}\t#{window_active}\t#{pane_id}\t#{window_name}";
const old = ["display-message", "-p", "-t", pane, "M#{session_id}\t#{window_id}\t#{window_name}", ";", "list-windows", "-t", pane, "-F", F1];
const neu = ["display-message", "-p", "-t", pane, "M#{session_id}\t#{window_id}\t#{window_name}", ";", "list-windows", "-a", "-F", F2];
const one = ["display-message", "-p", "-t", pane, "M#{session_id}\t#{window_id}\t#{window_name}"];
const times: Record<string, number[]> = { old: [], new: [], one: [] };
const timeIt = async (args: string[]) => { const t0 = performance.now(); const p = Bun.spawn(["tmux", "-S", S, ...args], { stdout: "pipe" }); await new Response(p.stdout).text(); await p.exited; return performance.now() - t0; };
for (let i = 0; i < 10; i++) { await timeIt(old); await timeIt(neu); }
for (let i = 0; i < 300; i++) { times.old.push(await timeIt(old)); times.new.push(await timeIt(neu)); times.one.push(await timeIt(one)); }
const med = (a: number[]) => { const s = [...a].sort((x, y) => x - y); return s[Math.floor(s.length / 2)]!.toFixed(3); };
console.log(`16 windows in 3 sessions, 300 interleaved runs, median ms: display-message alone ${med(times.one)}; + list-windows -t pane ${med(times.old)}; + list-windows -a ${med(times.new)}`);
t(["kill-server"]); rmSync(dir, { recursive: true, force: true });
