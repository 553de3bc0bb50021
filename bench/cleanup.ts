/**
 * What a cleanup of a long mailbox costs, and what it costs the agents using that mailbox meanwhile, against the
 * compiled binary in a private tmux server: bob's mailbox holds N old read lines of 185 bytes (default 1,000,000:
 * 185 MB), written directly; `cleanup --read-hours 0` archives them while alice sends to bob and bob receives, each
 * in a loop with a 20 ms pause (named agents: no tmux call per command).
 *
 *   cleanup          wall time and peak RSS (/usr/bin/time -v)
 *   sends, receives  how many ran during the cleanup, their median and longest time, and any that failed
 *
 * Run:  npm run bench:cleanup [-- LINES]   (builds first)   or   node_modules/.bin/bun bench/cleanup.ts [LINES]
 */
import { statSync } from "node:fs";
import { loadavg } from "node:os";
import { join } from "node:path";
import { writeOldReadLines } from "../test/support/big-mailbox.ts";
import { BINARY, tempRepo } from "../test/support/repo.ts";
import { TmuxServer } from "../test/support/tmux-server.ts";

const lines = Number(process.argv[2] ?? 1_000_000);
const repo = tempRepo("agentmail-bench-cleanup-");
const server = TmuxServer.start(["alice", "bob"], repo.dir);

async function run(args: string[], name: string): Promise<{ ms: number; code: number | null; stderr: string }> {
  const started = performance.now();
  const child = Bun.spawn([BINARY, ...args], { env: server.named(name), cwd: repo.dir, stdout: "pipe", stderr: "pipe" });
  const [, stderr] = await Promise.all([new Response(child.stdout).text(), new Response(child.stderr).text()]);
  await child.exited;
  return { ms: performance.now() - started, code: child.exitCode, stderr };
}

function summary(label: string, runs: { ms: number; code: number | null; stderr: string }[]): string {
  const times = runs.map((each) => each.ms).sort((a, b) => a - b);
  const failed = runs.filter((each) => each.code !== 0);
  const middle = times[Math.floor(times.length / 2)] ?? 0;
  const failures = failed.length > 0 ? `, ${failed.length} failed: ${failed[0]!.stderr.trim()}` : "";
  return `${label}: ${runs.length} during the cleanup, median ${middle.toFixed(0)} ms, longest ${(times.at(-1) ?? 0).toFixed(0)} ms${failures}`;
}

try {
  server.claimNames(BINARY, ["alice", "bob"], repo.dir);
  const mailbox = join(repo.mailDir, "bob.jsonl");
  writeOldReadLines(mailbox, "bob", lines);
  // Receives start at the end of the read history from here on (the cursor).
  await run(["receive"], "bob");
  const cleanup = Bun.spawn(["/usr/bin/time", "-v", BINARY, "cleanup", "--read-hours", "0"], {
    env: server.named("alice"),
    cwd: repo.dir,
    stdout: "pipe",
    stderr: "pipe",
  });
  let cleaning = true;
  const loop = async (args: string[], name: string) => {
    const runs = [];
    for (let i = 0; cleaning; i++) {
      runs.push(
        await run(
          args.map((arg) => arg.replace("#", String(i))),
          name,
        ),
      );
      await Bun.sleep(20);
    }
    return runs;
  };
  const during = Promise.all([loop(["send", "bob", "sent during the cleanup #"], "alice"), loop(["receive"], "bob")]);
  const [report, measured] = await Promise.all([new Response(cleanup.stdout).text(), new Response(cleanup.stderr).text()]);
  await cleanup.exited;
  cleaning = false;
  const [sends, receives] = await during;
  const field = (pattern: RegExp) => pattern.exec(measured)?.[1] ?? "?";
  const rss = Number(field(/Maximum resident set size \(kbytes\): (\d+)/)) / 1024;
  console.log(
    `mailbox: ${lines.toLocaleString("en")} lines, ${(statSync(join(repo.mailDir, ".archive", "bob.jsonl")).size / 1e6).toFixed(0)} MB`,
  );
  console.log(
    `cleanup: ${report.trim()}; wall ${field(/Elapsed \(wall clock\) time \(h:mm:ss or m:ss\): (\S+)/)}, peak RSS ${rss.toFixed(0)} MB`,
  );
  console.log(summary("sends", sends));
  console.log(summary("receives", receives));
  console.log(`load average: ${loadavg()[0]!.toFixed(1)}`);
} finally {
  server.stop();
  repo.remove();
}
