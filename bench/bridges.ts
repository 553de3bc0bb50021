/**
 * What bridging costs, measured against the compiled binary (dist/agentmail) in a throwaway repository and a private
 * tmux server:
 *
 *   sync 1,000     one `bridge sync` with 1,000 FEAT-124 files waiting in four agents' `.mail/` directories, and one
 *                  with 1,000 D-Mails waiting in an endpoint's outbox: wall time and per file; each run is checked
 *                  (1,000 messages, each once, every source moved)
 *   empty sync     a `bridge sync` with nothing waiting: what the mailman pays on each sweep once bridges exist
 *   send           `send feat124:worker`, `send dmail:paintress` and a plain `send bob`, interleaved
 *   claude-team    a fake Claude Code team bridged: one `bridge sync` with 1,000 entries waiting in a joined member's
 *                  inbox (checked like the others, and the inbox left empty), an empty sync with the team bridged,
 *                  and `send claude-team:<team>/codex` (Claude's lock, an append, a rename, fsyncs)
 *
 * Run:  npm run bench:bridges                  (builds dist/agentmail first)
 *       node_modules/.bin/bun bench/bridges.ts  (uses the binary already built)
 * Exits 0 whatever the timings; exits 1 if a correctness check failed.
 */
import { mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { availableParallelism, loadavg } from "node:os";
import { join } from "node:path";
import { claudeEntry, fakeTeam, TEAM } from "../test/support/claude-team.ts";
import { BINARY, tempRepo } from "../test/support/repo.ts";
import { TmuxServer, type Agent } from "../test/support/tmux-server.ts";

const FILES = 1_000;
const SYNC_RUNS = 5;
const SEND_ROUNDS = 30;
const AGENTS = ["alice", "bob", "carol", "dave"];
const problems: string[] = [];

interface Run {
  ms: number;
  code: number;
  stdout: string;
  stderr: string;
}

async function timed(argv: string[], agent: Agent, cwd: string, extraEnv: Record<string, string> = {}): Promise<Run> {
  const start = performance.now();
  const env = { ...agent.env, ...extraEnv };
  const child = Bun.spawn([BINARY, ...argv], { env, cwd, stdin: "ignore", stdout: "pipe", stderr: "pipe" });
  const [stdout, stderr, code] = await Promise.all([new Response(child.stdout).text(), new Response(child.stderr).text(), child.exited]);
  return { ms: performance.now() - start, code, stdout, stderr };
}

function median(samples: number[]): number {
  const sorted = [...samples].sort((a, b) => a - b);
  const middle = sorted.length >> 1;
  return sorted.length % 2 === 1 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
}

const p90 = (samples: number[]) => [...samples].sort((a, b) => a - b)[Math.ceil(samples.length * 0.9) - 1]!;

function feat124File(agent: string, n: number): string {
  const front = `from: worker-${n % 7}\nto: ${agent}\ntype: status\ntimestamp: 2026-01-01T00:00:00Z\ntags: [BUG-${n}, fugue]`;
  return `---\n${front}\n---\n\n## Status ${n}\n\nThe build is green again; review when you can.\n`;
}

function dmailFile(n: number): string {
  const front = [
    `name: report-${n}`,
    "kind: report",
    `description: "Expedition #${n} completed"`,
    `issues:\n    - MY-${n}`,
    'dmail-schema-version: "1"',
  ];
  return `---\n${front.join("\n")}\n---\n\n# Report ${n}\n\n- **Status:** success\n`;
}

/** Every mailbox's lines, checked: `count` messages in all, no id twice, every line parses. */
function checkDelivered(mailDir: string, count: number, what: string): void {
  const ids = new Set<string>();
  let lines = 0;
  for (const name of readdirSync(mailDir).filter((file) => file.endsWith(".jsonl"))) {
    for (const line of readFileSync(join(mailDir, name), "utf8").split("\n").filter(Boolean)) {
      lines++;
      ids.add((JSON.parse(line) as { id: string }).id);
    }
    rmSync(join(mailDir, name));
  }
  if (lines !== count || ids.size !== count) problems.push(`${what}: ${lines} lines with ${ids.size} ids, expected ${count}`);
}

const settle = () => new Promise((done) => setTimeout(done, 300));

async function main(): Promise<void> {
  const repo = tempRepo("agentmail-bench-bridges-");
  const server = TmuxServer.start(AGENTS, repo.dir);
  const cwd = repo.dir;
  const alice = server.agent("alice");
  try {
    for (const agent of AGENTS) await timed(["status", "ready"], server.agent(agent), cwd);
    mkdirSync(join(cwd, "tool", "outbox"), { recursive: true });
    const dmailEndpoint = ["bridge", "add", "dmail", "paintress", "--dir", "tool", "--to", "bob"];
    const setup = [["bridge", "add", "feat124"], ["bridge", "add", "roo"], dmailEndpoint];
    for (const args of setup) {
      const run = await timed(args, alice, cwd);
      if (run.code !== 0) throw new Error(`${args.join(" ")}: ${run.stderr}`);
    }

    const feat124: number[] = [];
    const dmail: number[] = [];
    for (let round = 0; round < SYNC_RUNS; round++) {
      for (const agent of AGENTS) mkdirSync(join(cwd, ".mail", agent), { recursive: true });
      for (let n = 0; n < FILES; n++) {
        const agent = AGENTS[n % AGENTS.length]!;
        writeFileSync(join(cwd, ".mail", agent, `2026-01-01T00-00-00_w_${String(n).padStart(4, "0")}.md`), feat124File(agent, n));
      }
      await settle();
      const run = await timed(["bridge", "sync", "--json"], alice, cwd);
      feat124.push(run.ms);
      if (run.code !== 0 || !run.stdout.includes(`"imported":${FILES}`)) {
        problems.push(`feat124 sync: ${run.stdout.slice(0, 200)} ${run.stderr.slice(0, 200)}`);
      }
      checkDelivered(repo.mailDir, FILES, "feat124 sync");
      rmSync(join(cwd, ".mail"), { recursive: true, force: true });

      for (let n = 0; n < FILES; n++) writeFileSync(join(cwd, "tool", "outbox", `report-${String(n).padStart(4, "0")}.md`), dmailFile(n));
      await settle();
      const dmailRun = await timed(["bridge", "sync", "--json"], alice, cwd);
      dmail.push(dmailRun.ms);
      if (dmailRun.code !== 0 || !dmailRun.stdout.includes(`"imported":${FILES}`)) {
        problems.push(`dmail sync: ${dmailRun.stdout.slice(0, 200)} ${dmailRun.stderr.slice(0, 200)}`);
      }
      checkDelivered(repo.mailDir, FILES, "dmail sync");
      if (readdirSync(join(cwd, "tool", "outbox")).length !== 0) problems.push("dmail sync left files in the outbox");
      rmSync(join(cwd, "tool", "archive"), { recursive: true, force: true });
    }

    const empty: number[] = [];
    const sendFeat: number[] = [];
    const sendDmail: number[] = [];
    const sendPlain: number[] = [];
    for (let round = 0; round < SEND_ROUNDS; round++) {
      empty.push((await timed(["bridge", "sync"], alice, cwd)).ms);
      const feat = await timed(["send", "feat124:worker", `round ${round}`], alice, cwd);
      const dm = await timed(["send", "dmail:paintress", `round ${round}`], alice, cwd);
      const plain = await timed(["send", "bob", `round ${round}`], alice, cwd);
      for (const run of [feat, dm, plain]) {
        if (run.code !== 0 || !/^[A-Za-z0-9]{8}\n$/.test(run.stdout)) problems.push(`send: ${run.stderr.slice(0, 200)}`);
      }
      sendFeat.push(feat.ms);
      sendDmail.push(dm.ms);
      sendPlain.push(plain.ms);
    }
    if (readdirSync(join(cwd, ".mail", "worker")).length !== SEND_ROUNDS) problems.push("send feat124: not one file per send");

    // The plain sends' messages are not the team sync's to count.
    for (const name of readdirSync(repo.mailDir).filter((file) => file.endsWith(".jsonl"))) rmSync(join(repo.mailDir, name));
    const team = fakeTeam({ members: [{ name: "codex" }] });
    const claude = { CLAUDE_CONFIG_DIR: team.configDir };
    const teamSync: number[] = [];
    const teamEmpty: number[] = [];
    const sendTeam: number[] = [];
    try {
      const added = await timed(["bridge", "add", "claude-team", TEAM, "--member", "codex=carol"], alice, cwd, claude);
      if (added.code !== 0) throw new Error(`bridge add claude-team: ${added.stderr}`);
      for (let round = 0; round < SYNC_RUNS; round++) {
        team.writeInbox(
          "codex",
          Array.from({ length: FILES }, (_, n) => claudeEntry("team-lead", `entry ${n}`, `summary ${n}`)),
        );
        const run = await timed(["bridge", "sync", "--json"], alice, cwd, claude);
        teamSync.push(run.ms);
        if (run.code !== 0 || !run.stdout.includes(`"imported":${FILES}`))
          problems.push(`team sync: ${run.stdout.slice(0, 200)} ${run.stderr.slice(0, 200)}`);
        checkDelivered(repo.mailDir, FILES, "team sync");
        if (team.entries("codex").length !== 0) problems.push("team sync left entries in the inbox");
      }
      for (let round = 0; round < SEND_ROUNDS; round++) {
        teamEmpty.push((await timed(["bridge", "sync"], alice, cwd, claude)).ms);
        const run = await timed(["send", `claude-team:${TEAM}/codex`, `round ${round}`], alice, cwd, claude);
        if (run.code !== 0 || !/^[A-Za-z0-9]{8}\n$/.test(run.stdout)) problems.push(`send claude-team: ${run.stderr.slice(0, 200)}`);
        sendTeam.push(run.ms);
        // The member's mail comes back on the next sync: keep the inbox as it was, so every round is the same.
        team.writeInbox("codex", []);
      }
    } finally {
      team.remove();
    }

    const row = (label: string, samples: number[], perFile = false) => {
      const each = perFile ? (median(samples) / FILES).toFixed(2) : "—";
      return `| ${label} (n=${samples.length}) | ${median(samples).toFixed(1)} | ${p90(samples).toFixed(1)} | ${each} |`;
    };
    const machine = `bun ${Bun.version}, ${availableParallelism()} cores, ${process.platform}, load average ${loadavg()[0]!.toFixed(2)}`;
    console.log(`\n## agentmail bridges benchmark — ${machine}\n`);
    console.log("| command | median ms | p90 ms | ms per file |\n|---|---:|---:|---:|");
    console.log(row(`bridge sync, ${FILES.toLocaleString("en")} FEAT-124 files waiting`, feat124, true));
    console.log(row(`bridge sync, ${FILES.toLocaleString("en")} D-Mails waiting`, dmail, true));
    console.log(row("bridge sync, nothing waiting", empty));
    console.log(row("send feat124:worker", sendFeat));
    console.log(row("send dmail:paintress", sendDmail));
    console.log(row("send bob (a window)", sendPlain));
    console.log(row(`bridge sync, ${FILES.toLocaleString("en")} entries in a Claude team member's inbox`, teamSync, true));
    console.log(row("bridge sync, a Claude team bridged, nothing waiting", teamEmpty));
    console.log(row("send claude-team:<team>/codex", sendTeam));
    const verdict = `every sync imported exactly ${FILES} messages, each once, and moved every source; every send printed one id`;
    console.log(`\ncorrectness: ${problems.length === 0 ? verdict : "FAILED"}`);
    for (const problem of problems) console.log(`  ${problem}`);
  } finally {
    server.stop();
    repo.remove();
  }
  process.exitCode = problems.length === 0 ? 0 : 1;
}

await main();
