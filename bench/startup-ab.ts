/**
 * Start-up of two (or more) builds of the binary, compared run for run: each round runs every build once per case,
 * in one private tmux server and one throwaway repository, so load on the machine hits all builds alike.
 *
 *   node_modules/.bin/bun bench/startup-ab.ts before=/path/to/old/agentmail after=dist/agentmail   (ROUNDS=300)
 *
 * Copy each binary to a fresh file right before comparing: the same bytes run ~3 ms slower from a file that has sat
 * in the page cache for a while than from a fresh copy (measured on this machine), which swamps what is compared.
 * Prints the median wall time and CPU time (the process and the tmux client it reaped) per build and case.
 */
import { tempRepo } from "../test/support/repo.ts";
import { TmuxServer } from "../test/support/tmux-server.ts";

const ROUNDS = Number(process.env.ROUNDS ?? 200);
const WARMUP = 5;
const builds = process.argv.slice(2).map((spec) => {
  const [label, path] = spec.split("=");
  if (!label || !path) throw new Error(`give builds as label=path, not ${JSON.stringify(spec)}`);
  return { label, path };
});

const repo = tempRepo();
const server = TmuxServer.start(["alice", "bob", "idle"], repo.dir);
const outside: Record<string, string> = { ...server.agent("alice").env };
delete outside.TMUX;
delete outside.TMUX_PANE;

interface Sample {
  ms: number;
  cpuMs: number;
  code: number;
  stdout: string;
}

async function timed(argv: string[], env: Record<string, string>): Promise<Sample> {
  const start = performance.now();
  const child = Bun.spawn(argv, { env, cwd: repo.dir, stdin: "ignore", stdout: "pipe", stderr: "pipe" });
  const [stdout, , code] = await Promise.all([new Response(child.stdout).text(), new Response(child.stderr).text(), child.exited]);
  return { ms: performance.now() - start, cpuMs: Number(child.resourceUsage()?.cpuTime.total ?? 0) / 1000, code, stdout };
}

const CASES = {
  "--version": (binary: string) => timed([binary, "--version"], server.agent("alice").env),
  "--version, no tmux": (binary: string) => timed([binary, "--version"], outside),
  "receive --hook, no tmux": (binary: string) => timed([binary, "receive", "--hook"], outside),
  send: (binary: string) => timed([binary, "send", "bob", "hello there"], server.agent("alice").env),
  receive: (binary: string) => timed([binary, "receive"], server.agent("bob").env),
  "receive --hook": (binary: string) => timed([binary, "receive", "--hook"], server.agent("idle").env),
  "named send": (binary: string) => timed([binary, "send", "bob", "hello there"], server.named("alice")),
  "named receive": (binary: string) => timed([binary, "receive"], server.named("bob")),
  "named hook": (binary: string) => timed([binary, "receive", "--hook"], server.named("idle")),
} as const;
type Case = keyof typeof CASES;

const samples = new Map(builds.map((build) => [build.label, new Map<Case, Sample[]>()]));
try {
  server.claimNames(builds[0]!.path, ["alice", "bob", "idle"], repo.dir);
  for (let round = 0; round < WARMUP + ROUNDS; round++) {
    for (const build of builds) {
      for (const [name, run] of Object.entries(CASES) as [Case, (binary: string) => Promise<Sample>][]) {
        const sample = await run(build.path);
        if ((name === "receive" || name === "named receive") && (sample.code !== 0 || !sample.stdout.startsWith("From: alice"))) {
          throw new Error(`${build.label}: receive did not deliver the message just sent: ${JSON.stringify(sample)}`);
        }
        if (round < WARMUP) continue;
        const byCase = samples.get(build.label)!;
        byCase.set(name, [...(byCase.get(name) ?? []), sample]);
      }
    }
  }
} finally {
  server.stop();
  repo.remove();
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[values.length >> 1]!;
console.log(`${ROUNDS} rounds; median wall ms / median CPU ms`);
console.log(["case".padEnd(24), ...builds.map((build) => build.label.padStart(18))].join(""));
for (const name of Object.keys(CASES) as Case[]) {
  const cells = builds.map((build) => {
    const runs = samples.get(build.label)!.get(name)!;
    return `${median(runs.map((run) => run.ms)).toFixed(2)} / ${median(runs.map((run) => run.cpuMs)).toFixed(2)}`.padStart(18);
  });
  console.log([name.padEnd(24), ...cells].join(""));
}
