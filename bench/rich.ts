/**
 * What the rich-mail commands cost on a big store, against the compiled binary in a private tmux server:
 * 20 mailboxes × 5,000 messages (100,000 in all, every agent sending to every other, 2% unread, some with a
 * subject, type and priority, a ten-message thread spread over five mailboxes). The caller is agent00, who has
 * 5,000 messages in its mailbox and sent 5,000.
 *
 *   floor            agentmail's own tmux call + `agentmail --version`, as in bench/run.ts
 *   inbox            agent00's 100 unread messages
 *   inbox --all      all 5,000 of them, one line each
 *   thread           the ten-message thread, found in all 20 mailboxes
 *   sent             the 5,000 messages agent00 sent, with receipts, using its sent index (the steady state)
 *   sent, no index   the same with the index removed before each run: every mailbox read in full
 *   sent --unread    the 100 of them not read yet
 *   search           a word in 1% of subjects and bodies of agent00's mail and the mail it sent
 *
 * Each run is checked (line counts), and the timed commands run round-robin so load hits them alike.
 * Run:  npm run bench:rich   (builds first)   or   node_modules/.bin/bun bench/rich.ts
 */
import { mkdirSync, rmSync, writeFileSync } from "node:fs";
import { availableParallelism, loadavg } from "node:os";
import { join } from "node:path";
import { BINARY, tempRepo } from "../test/support/repo.ts";
import { TmuxServer } from "../test/support/tmux-server.ts";
import { summarize, timedFloor, timedSpawn, type Run, type Summary } from "./timing.ts";

const AGENTS = Array.from({ length: 20 }, (_, i) => `agent${String(i).padStart(2, "0")}`);
const PER_MAILBOX = 5_000;
const ROUNDS = 20;
const WARMUP = 3;
const CALLER = AGENTS[0]!;
const THREAD_ROOT = "Thread00";

interface Fixture {
  unreadInbox: number;
  sentTotal: number;
  sentUnread: number;
  searchHits: number;
  threadIds: string[];
}

/** Writes the store straight to disk, lines shaped like the ones send writes. */
function writeStore(mailDir: string): Fixture {
  const start = Date.UTC(2026, 0, 1);
  const fixture: Fixture = { unreadInbox: 0, sentTotal: 0, sentUnread: 0, searchHits: 0, threadIds: [] };
  const searched = new Set<string>();
  AGENTS.forEach((to, box) => {
    const lines: string[] = [];
    for (let n = 0; n < PER_MAILBOX; n++) {
      const from = AGENTS[(box + 1 + (n % (AGENTS.length - 1))) % AGENTS.length]!;
      const id = `B${box.toString(36)}${n.toString(36).padStart(6, "0")}`;
      const unread = n % 50 === 0;
      const rich = n % 10 === 0 ? { subject: `Build ${n} of ${to}`, type: "report", priority: n % 30 === 0 ? "high" : "low" } : {};
      const word = n % 100 === 7 ? "deploy" : "review";
      const record = {
        id,
        from,
        to,
        message: `Message ${n} to ${to}: the ${word} of the change is done; the tests pass on my side, have a look when you can.`,
        read_flag: !unread,
        created_at: new Date(start + (n * AGENTS.length + box) * 1000).toISOString(),
        ...rich,
      };
      lines.push(JSON.stringify(record));
      if (to === CALLER && unread) fixture.unreadInbox++;
      if (from === CALLER) {
        fixture.sentTotal++;
        if (unread) fixture.sentUnread++;
      }
      if ((to === CALLER || from === CALLER) && word === "deploy") searched.add(id);
    }
    writeFileSync(join(mailDir, `${to}.jsonl`), lines.join("\n") + "\n", { mode: 0o600 });
  });
  // The thread: ten messages between agents 1..5, appended to their mailboxes.
  for (let n = 0; n < 10; n++) {
    const from = AGENTS[1 + (n % 5)]!;
    const to = AGENTS[1 + ((n + 1) % 5)]!;
    const id = n === 0 ? THREAD_ROOT : `Thread${String(n).padStart(2, "0")}`;
    const fields =
      n === 0
        ? { subject: "Release plan" }
        : { subject: "Re: Release plan", type: "response", thread_id: THREAD_ROOT, in_reply_to: fixture.threadIds.at(-1) };
    const record = {
      id,
      from,
      to,
      message: `Thread message ${n}`,
      read_flag: true,
      created_at: new Date(start + 200_000_000 + n * 1000).toISOString(),
      ...fields,
    };
    writeFileSync(join(mailDir, `${to}.jsonl`), JSON.stringify(record) + "\n", { flag: "a" });
    fixture.threadIds.push(id);
  }
  fixture.searchHits = searched.size;
  return fixture;
}

const problems: string[] = [];
function expectLines(label: string, run: { code: number; stdout: string; stderr: string }, lines: number): void {
  const got = run.stdout === "" ? 0 : run.stdout.trimEnd().split("\n").length;
  if (run.code !== 0 || got !== lines)
    problems.push(`${label}: expected ${lines} lines and exit 0, got ${got} lines, exit ${run.code}: ${run.stderr.slice(0, 200)}`);
}

async function main(): Promise<void> {
  const repo = tempRepo("agentmail-bench-rich-");
  let server: TmuxServer | null = null;
  try {
    mkdirSync(repo.mailDir, { recursive: true, mode: 0o700 });
    const fixture = writeStore(repo.mailDir);
    server = TmuxServer.start(AGENTS, repo.dir);
    const me = server.agent(CALLER);
    const cwd = repo.dir;
    const indexPath = join(repo.mailDir, ".sent", `${CALLER}.json`);
    const cases: { label: string; sample(): Promise<Run> }[] = [
      { label: "floor: agentmail's tmux lookup + agentmail --version", sample: () => timedFloor(me, cwd) },
      ...(
        [
          ["inbox", ["inbox"], fixture.unreadInbox],
          ["inbox --all", ["inbox", "--all"], PER_MAILBOX],
          ["thread (10 messages in 5 of 20 mailboxes)", ["thread", "Thread05"], fixture.threadIds.length * 8],
          ["sent (5,000, with its index)", ["sent"], fixture.sentTotal + 3],
          ["sent --unread", ["sent", "--unread"], fixture.sentUnread],
          ["search (a word in 1%)", ["search", "deploy"], fixture.searchHits],
        ] as const
      ).map(([label, args, lines]) => ({
        label,
        async sample() {
          const run = await timedSpawn([BINARY, ...args], me, cwd);
          // thread prints 7 or 8 lines per message (headers, blank, body, separator); check the message count instead.
          if (args[0] === "thread")
            expectLines(
              label,
              {
                ...run,
                stdout: run.stdout
                  .split("\n")
                  .filter((line) => line.startsWith("ID: "))
                  .join("\n"),
              },
              fixture.threadIds.length,
            );
          else if (args[0] === "sent" && args.length === 1) expectLines(label, run, fixture.sentTotal);
          else expectLines(label, run, lines);
          return run;
        },
      })),
      {
        label: "sent, no index (every mailbox read in full)",
        async sample() {
          rmSync(indexPath, { force: true });
          const run = await timedSpawn([BINARY, "sent"], me, cwd);
          expectLines("sent, no index", run, fixture.sentTotal);
          return run;
        },
      },
    ];
    for (let round = 0; round < WARMUP; round++) for (const each of cases) await each.sample();
    const samples = cases.map((): Run[] => []);
    for (let round = 0; round < ROUNDS; round++) for (const [index, each] of cases.entries()) samples[index]!.push(await each.sample());
    const summaries: Summary[] = samples.map((runs) => summarize(runs.map((run) => run.ms)));
    const cpu: Summary[] = samples.map((runs) => summarize(runs.map((run) => run.cpuMs)));
    const floor = summaries[0]!.median;
    const floorCpu = cpu[0]!.median;
    console.log(
      `\n## agentmail rich-mail benchmark — 20 mailboxes × ${PER_MAILBOX.toLocaleString("en")} messages; ` +
        `${ROUNDS} interleaved rounds after ${WARMUP} warm-up; ` +
        `bun ${Bun.version}, ${availableParallelism()} cores, load average ${loadavg()[0]!.toFixed(2)}\n`,
    );
    console.log("| command | median ms | p90 ms | ratio to floor | median CPU ms | CPU ratio to floor |");
    console.log("|---|---:|---:|---:|---:|---:|");
    cases.forEach((each, index) => {
      const summary = summaries[index]!;
      const { median } = cpu[index]!;
      console.log(
        `| ${each.label} (n=${summary.runs}) | ${summary.median.toFixed(2)} | ${summary.p90.toFixed(2)} | ` +
          `${(summary.median / floor).toFixed(2)} | ` +
          `${median.toFixed(2)} | ${(median / floorCpu).toFixed(2)} |`,
      );
    });
    if (problems.length > 0) {
      console.log(`\nCORRECTNESS FAILURES (${problems.length}):`);
      for (const problem of problems.slice(0, 20)) console.log(`- ${problem}`);
      process.exitCode = 1;
    } else console.log("\ncorrectness: every run printed the expected number of messages");
  } finally {
    server?.stop();
    repo.remove();
  }
}

await main();
