/**
 * `sent` of the agent who sent every line of a long mailbox (1,000,000 lines of 185 bytes, as bench/sizes.ts writes
 * them), two or more builds compared round for round in one private tmux server: cold (no sent index yet: the scan
 * that makes it, then the listing) and warm (from the index), text and --json. Each round runs every build once per
 * case, so load on the machine hits all builds alike; every run's output is checked (every line listed).
 *
 *   node_modules/.bin/bun bench/sent-ab.ts before=/path/to/old/agentmail after=dist/agentmail   (ROUNDS=5, LINES=1000000)
 *
 * Prints the median wall time, CPU time (user + system) and peak memory per build and case, and the load average.
 * Exits 1 if a run did not list every line.
 */
import { rmSync } from "node:fs";
import { loadavg } from "node:os";
import { join } from "node:path";
import { writeOldReadLines } from "../test/support/big-mailbox.ts";
import { BINARY, tempRepo } from "../test/support/repo.ts";
import { TmuxServer } from "../test/support/tmux-server.ts";

const ROUNDS = Number(process.env.ROUNDS ?? 5);
const LINES = Number(process.env.LINES ?? 1_000_000);
const builds = process.argv.slice(2).map((spec) => {
  const [label, path] = spec.split("=");
  if (!label || !path) throw new Error(`give builds as label=path, not ${JSON.stringify(spec)}`);
  return { label, path };
});
if (builds.length === 0) builds.push({ label: "this build", path: BINARY });

const CASES = [
  { label: "sent, cold", args: ["sent"], cold: true },
  { label: "sent, warm", args: ["sent"], cold: false },
  { label: "sent --json, warm", args: ["sent", "--json"], cold: false },
];

interface Sample {
  seconds: number;
  cpu: number;
  megabytes: number;
}

const repo = tempRepo("agentmail-bench-sent-");
const server = TmuxServer.start(["alice", "bob"], repo.dir);
const samples = new Map<string, Sample[]>();
const problems: string[] = [];
try {
  server.claimNames(BINARY, ["alice", "bob"], repo.dir);
  writeOldReadLines(join(repo.mailDir, "bob.jsonl"), "bob", LINES);
  for (let round = 0; round < ROUNDS; round++) {
    for (const { label: name, args, cold } of CASES) {
      for (const build of builds) {
        if (cold) rmSync(join(repo.mailDir, ".sent"), { recursive: true, force: true });
        const started = performance.now();
        const run = Bun.spawnSync(["/usr/bin/time", "-f", "%U %S %M", build.path, ...args], {
          env: server.named("alice"),
          cwd: repo.dir,
          stdin: "ignore",
        });
        const seconds = (performance.now() - started) / 1000;
        const [user, system, kilobytes] = run.stderr.toString().trim().split("\n").pop()!.split(" ").map(Number);
        const stdout = run.stdout.toString();
        const listed = args.includes("--json") ? stdout.split('"id":').length - 1 : stdout.split("\n").length - 1;
        if (run.exitCode !== 0 || listed !== LINES)
          problems.push(`${build.label}, ${name}: exit ${run.exitCode}, ${listed} of ${LINES} listed`);
        const key = `${build.label}\n${name}`;
        (samples.get(key) ?? samples.set(key, []).get(key)!).push({ seconds, cpu: user! + system!, megabytes: kilobytes! / 1024 });
      }
    }
  }
} finally {
  server.stop();
  repo.remove();
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;
console.log(
  `\n## sent of ${LINES.toLocaleString("en")} lines, medians of ${ROUNDS} interleaved rounds; load average ${loadavg()[0]!.toFixed(2)}\n`,
);
console.log("| build | case | wall s | CPU s | MB |");
console.log("|---|---|---:|---:|---:|");
for (const [key, list] of samples) {
  const [build, name] = key.split("\n");
  const cell = (pick: (sample: Sample) => number, digits: number) => median(list.map(pick)).toFixed(digits);
  console.log(`| ${build} | ${name} | ${cell((s) => s.seconds, 2)} | ${cell((s) => s.cpu, 2)} | ${cell((s) => s.megabytes, 0)} |`);
}
if (problems.length > 0) {
  console.log(`\nCORRECTNESS FAILURES (${problems.length}):`);
  for (const problem of problems) console.log(`- ${problem}`);
  process.exitCode = 1;
}
