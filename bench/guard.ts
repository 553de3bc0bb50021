/**
 * What the pre-edit guard costs an agent's edit, against the compiled binary in a private tmux server and a
 * throwaway repository, next to `receive --hook` (the hook every turn runs, whose start-up budget the guard shares):
 *
 *   --version              the start-up floor
 *   receive --hook         no unread mail
 *   guard, nothing claimed Claude Code's Write hook input on stdin, no claims document at all
 *   guard, others' claims  20 claims of another agent, none covering the file: still no identity, no tmux call
 *   guard, refused         the file is claimed by another agent: identity, the holder judged, the refusal written
 *
 * Round-robin, one of each per round, so load on the shared machine hits all alike; wall and CPU time both shown.
 *
 * Run:  node_modules/.bin/bun build.ts && node_modules/.bin/bun bench/guard.ts
 */
import { join } from "node:path";
import { BINARY, tempRepo } from "../test/support/repo.ts";
import { TmuxServer, type Agent } from "../test/support/tmux-server.ts";
import { summarize, type Run } from "./timing.ts";

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 60);
const WARMUP = 5;

async function timed(argv: string[], agent: Agent, cwd: string, stdin?: string): Promise<Run> {
  const start = performance.now();
  const child = Bun.spawn(argv, {
    env: agent.env,
    cwd,
    stdin: stdin === undefined ? "ignore" : new Blob([stdin]),
    stdout: "pipe",
    stderr: "pipe",
  });
  const [stdout, stderr, code] = await Promise.all([new Response(child.stdout).text(), new Response(child.stderr).text(), child.exited]);
  return { ms: performance.now() - start, cpuMs: Number(child.resourceUsage()?.cpuTime.total ?? 0) / 1000, code, stdout, stderr };
}

const repo = tempRepo("agentmail-bench-guard-");
const empty = tempRepo("agentmail-bench-guard-empty-");
const tmux = TmuxServer.start(["alice", "bob", "carol"], repo.dir);
try {
  const alice = tmux.agent("alice");
  const bob = tmux.agent("bob");
  const write = (file: string) =>
    JSON.stringify({
      hook_event_name: "PreToolUse",
      tool_name: "Write",
      tool_input: { file_path: join(repo.dir, file), content: "x" },
      cwd: repo.dir,
    });
  // A mailbox with a cursor, as an agent that has read mail before has.
  await timed([BINARY, "send", "alice", "hello"], bob, repo.dir);
  await timed([BINARY, "receive"], alice, repo.dir);

  const cases: { name: string; run: () => Promise<Run>; expect: (run: Run) => boolean }[] = [
    { name: "--version", run: () => timed([BINARY, "--version"], alice, repo.dir), expect: (run) => run.code === 0 },
    {
      name: "receive --hook (no mail)",
      run: () => timed([BINARY, "receive", "--hook"], alice, repo.dir),
      expect: (run) => run.code === 0 && run.stderr === "",
    },
    {
      name: "guard claude, nothing claimed",
      run: () => timed([BINARY, "guard", "claude"], alice, empty.dir, write("src/a.ts").replaceAll(repo.dir, empty.dir)),
      expect: (run) => run.code === 0 && run.stdout === "",
    },
    {
      name: "guard claude, 20 claims of others elsewhere",
      run: () => timed([BINARY, "guard", "claude"], alice, repo.dir, write("src/a.ts")),
      expect: (run) => run.code === 0 && run.stdout === "",
    },
    {
      name: "guard claude, refused",
      // carol: her refusal mail must not land in the mailbox receive --hook reads.
      run: () => timed([BINARY, "guard", "claude"], tmux.agent("carol"), repo.dir, write("owned/x.ts")),
      expect: (run) => run.code === 0 && run.stdout.includes('"deny"'),
    },
  ];
  const paths = Array.from({ length: 19 }, (_, i) => `docs/part-${i}.md`);
  const claimed = await timed([BINARY, "claim", ...paths, "owned/**"], bob, repo.dir);
  if (claimed.code !== 0) throw new Error(`claim failed: ${claimed.stderr}`);

  const samples = new Map(cases.map((each) => [each.name, { ms: [] as number[], cpu: [] as number[] }]));
  for (let round = 0; round < WARMUP + ROUNDS; round++) {
    for (const each of cases) {
      const run = await each.run();
      if (!each.expect(run)) throw new Error(`${each.name}: unexpected outcome: ${JSON.stringify(run)}`);
      if (round < WARMUP) continue;
      samples.get(each.name)!.ms.push(run.ms);
      samples.get(each.name)!.cpu.push(run.cpuMs);
    }
  }
  console.log(`${ROUNDS} rounds, round-robin; ms (median / p90 wall, median CPU)`);
  for (const [name, { ms, cpu }] of samples) {
    const wall = summarize(ms);
    console.log(
      `${name.padEnd(44)} ${wall.median.toFixed(2).padStart(7)} / ${wall.p90.toFixed(2).padStart(7)}   cpu ${summarize(cpu).median.toFixed(2).padStart(6)}`,
    );
  }
} finally {
  tmux.stop();
  repo.remove();
  empty.remove();
}
