/**
 * What one agentmail call costs, measured against the compiled binary (dist/agentmail) in a private tmux server
 * and a throwaway git repository (mail in its .git/mail).
 *
 *   floor          `tmux display-message -p -t <pane> '#W'` then `agentmail --version`, timed as one unit: the
 *                  least a command that must ask tmux who is calling can cost (one tmux client + one start-up)
 *   send           to another window
 *   receive        with one unread message waiting (the one the send of the same round delivered)
 *   receive --hook with no unread mail (the agent has read 100 messages before, so it has a cursor)
 *   receive@100 / receive@100k   behind 100 / 100,000 read messages, cursor in place (the steady state); the first
 *                  receive of each, which finds no cursor and scans the whole mailbox, is reported once as "cold"
 *   throughput     8 concurrent senders × 25 messages into one mailbox, then checked: every id a sender printed
 *                  is in the mailbox exactly once and every line parses
 *
 * The timed commands run round-robin, one of each per round, so a change in machine load hits all of them alike.
 *
 * Run:  npm run bench                      (builds dist/agentmail first)
 *       node_modules/.bin/bun bench/run.ts  (uses the binary already built)
 * Exits 0 whatever the timings (it is a report, not a test); exits 1 if a correctness check failed.
 */
import { appendFileSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { availableParallelism, loadavg } from "node:os";
import { basename, dirname, join } from "node:path";
import { BINARY, tempRepo } from "../test/support/repo.ts";
import { TmuxServer, type Agent } from "../test/support/tmux-server.ts";
import { summarize, type Summary } from "./timing.ts";

const TIMED_ROUNDS = 50;
const WARMUP_ROUNDS = 5;
const SMALL_HISTORY = 100;
const LARGE_HISTORY = 100_000;
const PARALLEL_SENDERS = 8;
const MESSAGES_PER_SENDER = 25;
const THROUGHPUT_TRIALS = 3;

const LATENCY_TARGET = 1.25;
const HISTORY_TARGET = 1.5;

/** Window names are plain [a-z0-9], so each mailbox file name is the name itself (no percent-encoding). */
const WINDOWS = { sender: "alice", receiver: "bob", idle: "idle", small: "hist100", large: "hist100k", crowd: "crowd" } as const;

// ---------------------------------------------------------------------------------------------------------------
// Spawning and timing

interface Run {
  ms: number;
  /** User + system CPU of the process and the children it reaped (its tmux client). */
  cpuMs: number;
  code: number;
  stdout: string;
  stderr: string;
}

/** Spawn to exit, with both pipes drained, so a command is charged for everything it writes. */
async function timedSpawn(argv: string[], agent: Agent, cwd: string): Promise<Run> {
  const start = performance.now();
  const child = Bun.spawn(argv, { env: agent.env, cwd, stdin: "ignore", stdout: "pipe", stderr: "pipe" });
  const [stdout, stderr, code] = await Promise.all([new Response(child.stdout).text(), new Response(child.stderr).text(), child.exited]);
  const ms = performance.now() - start;
  return { ms, cpuMs: Number(child.resourceUsage()?.cpuTime.total ?? 0) / 1000, code, stdout, stderr };
}

/** The floor is two spawns back to back; the unit's time is their sum, its outputs those of both. */
async function timedFloor(agent: Agent, cwd: string): Promise<Run> {
  const tmux = await timedSpawn(["tmux", "display-message", "-p", "-t", agent.paneId, "#W"], agent, cwd);
  const version = await timedSpawn([BINARY, "--version"], agent, cwd);
  return {
    ms: tmux.ms + version.ms,
    cpuMs: tmux.cpuMs + version.cpuMs,
    code: tmux.code || version.code,
    stdout: tmux.stdout + version.stdout,
    stderr: tmux.stderr + version.stderr,
  };
}

// ---------------------------------------------------------------------------------------------------------------
// Mailbox fixtures: written straight to the store, outside any timed region

interface Fixture {
  path: string;
  to: string;
  written: number;
}

function mailboxOf(mailDir: string, name: string): Fixture {
  return { path: join(mailDir, `${name}.jsonl`), to: name, written: 0 };
}

/** Deterministic ids in the binary's format (8 × [A-Za-z0-9]), so a receive's output names the line it took. */
function fixtureId(prefix: "H" | "U", n: number): string {
  return prefix + n.toString(36).padStart(7, "0");
}

/** A line shaped like the ones send writes, so the reader does the same parsing work on it. */
function messageLine(id: string, to: string, body: string, read: boolean, n: number): string {
  const createdAt = new Date(Date.UTC(2025, 0, 1) + n * 1000).toISOString();
  return JSON.stringify({ id, from: WINDOWS.sender, to, message: body, read_flag: read, created_at: createdAt }) + "\n";
}

function writeReadHistory(mailbox: Fixture, count: number): void {
  const lines: string[] = [];
  for (let n = 0; n < count; n++) {
    lines.push(
      messageLine(fixtureId("H", n), mailbox.to, `Old message ${n}: the build on main is green again, review when you can.`, true, n),
    );
  }
  writeFileSync(mailbox.path, lines.join(""), { mode: 0o600 });
}

/** Appends one unread message and returns its id, which the next receive must deliver. */
function appendUnread(mailbox: Fixture): string {
  const n = mailbox.written++;
  const id = fixtureId("U", n);
  appendFileSync(mailbox.path, messageLine(id, mailbox.to, `Fresh message ${id}: please take a look.`, false, n), { mode: 0o600 });
  return id;
}

// ---------------------------------------------------------------------------------------------------------------
// Correctness: every timed run is checked too, so a fast wrong answer cannot pass as a fast one

const problems: string[] = [];

function complain(what: string, run: Run, why: string): void {
  if (problems.length < 20)
    problems.push(
      `${what}: ${why} (exit ${run.code}, stdout ${JSON.stringify(run.stdout.slice(0, 200))}, stderr ${JSON.stringify(run.stderr.slice(0, 200))})`,
    );
  else if (problems.length === 20) problems.push("… further problems not shown");
}

function expectDelivered(what: string, run: Run, id: string): void {
  if (run.code !== 0 || !run.stdout.includes(`\nID: ${id}\n`)) complain(what, run, `expected message ${id}`);
}

/** The mailbox after the parallel senders: exactly the ids they printed, each once, and nothing unparseable. */
function verifyMailbox(mailbox: Fixture, expectedIds: Set<string>): void {
  const text = readFileSync(mailbox.path, "utf8");
  const lines = text.split("\n");
  if (lines.pop() !== "") problems.push(`${mailbox.path}: the last line has no newline (torn append)`);
  const seen = new Set<string>();
  lines.forEach((line, index) => {
    try {
      const id = (JSON.parse(line) as { id?: unknown }).id;
      if (typeof id !== "string") problems.push(`${mailbox.path} line ${index + 1}: no id`);
      else if (seen.has(id)) problems.push(`${mailbox.path} line ${index + 1}: id ${id} appears twice`);
      else seen.add(id);
    } catch {
      problems.push(`${mailbox.path} line ${index + 1} does not parse: ${JSON.stringify(line.slice(0, 120))}`);
    }
  });
  if (lines.length !== expectedIds.size) problems.push(`${mailbox.path}: ${lines.length} lines, expected ${expectedIds.size}`);
  const missing = [...expectedIds].filter((id) => !seen.has(id));
  if (missing.length > 0)
    problems.push(`${mailbox.path}: ${missing.length} ids that send printed are missing, e.g. ${missing.slice(0, 3).join(", ")}`);
}

function verifyNoLockLeft(mailboxes: Fixture[]): void {
  for (const mailbox of mailboxes) {
    // readdir, not existsSync: a lock is a symlink, and existsSync would follow it.
    const dir = readdirSync(dirname(mailbox.path));
    for (const lock of [`${basename(mailbox.path)}.lock`, `${basename(mailbox.path)}.rlock`]) {
      if (dir.includes(lock)) problems.push(`${lock} was left behind after every command had exited`);
    }
  }
}

// ---------------------------------------------------------------------------------------------------------------
// The interleaved latency benchmark

interface Case {
  label: string;
  /** Runs one timed sample; anything done before `timedSpawn` (writing fixtures) is outside the timed region. */
  sample(): Promise<number>;
}

interface Setup {
  server: TmuxServer;
  cwd: string;
  mailDir: string;
}

interface Mailboxes {
  receiver: Fixture;
  idle: Fixture;
  small: Fixture;
  large: Fixture;
  crowd: Fixture;
}

function mailboxesIn(mailDir: string): Mailboxes {
  const of = (name: string) => mailboxOf(mailDir, name);
  return {
    receiver: of(WINDOWS.receiver),
    idle: of(WINDOWS.idle),
    small: of(WINDOWS.small),
    large: of(WINDOWS.large),
    crowd: of(WINDOWS.crowd),
  };
}

/** In table order, which is also the order of each round. */
function latencyCases({ server, cwd }: Setup, { small, large }: Mailboxes) {
  const sender = server.agent(WINDOWS.sender);
  const receiver = server.agent(WINDOWS.receiver);
  let sentToReceiver = "";

  const receiveFrom = (mailbox: Fixture) => async () => {
    const id = appendUnread(mailbox);
    const run = await timedSpawn([BINARY, "receive"], server.agent(mailbox.to), cwd);
    expectDelivered(`receive@${mailbox.to}`, run, id);
    return run.ms;
  };

  return {
    floor: {
      label: "floor: tmux display-message + agentmail --version",
      async sample() {
        const run = await timedFloor(sender, cwd);
        if (run.code !== 0 || !run.stdout.startsWith(`${WINDOWS.sender}\n`))
          complain("floor", run, "expected the window name, then the version");
        return run.ms;
      },
    },
    // The floor's two halves, timed on their own, show how its time splits between tmux and the binary's start-up.
    tmuxAlone: {
      label: "floor part: tmux display-message alone",
      async sample() {
        return (await timedSpawn(["tmux", "display-message", "-p", "-t", sender.paneId, "#W"], sender, cwd)).ms;
      },
    },
    versionAlone: {
      label: "floor part: agentmail --version alone",
      async sample() {
        return (await timedSpawn([BINARY, "--version"], sender, cwd)).ms;
      },
    },
    send: {
      label: "send (to another window)",
      async sample() {
        const run = await timedSpawn([BINARY, "send", WINDOWS.receiver, "Round message: the tests pass on my side."], sender, cwd);
        sentToReceiver = run.stdout.trim();
        if (run.code !== 0 || !/^[A-Za-z0-9]{8}$/.test(sentToReceiver)) complain("send", run, "expected an 8-character id");
        return run.ms;
      },
    },
    receive: {
      label: "receive (1 unread waiting)",
      async sample() {
        const run = await timedSpawn([BINARY, "receive"], receiver, cwd);
        expectDelivered("receive", run, sentToReceiver);
        return run.ms;
      },
    },
    hook: {
      label: "receive --hook (no unread mail)",
      async sample() {
        const run = await timedSpawn([BINARY, "receive", "--hook"], server.agent(WINDOWS.idle), cwd);
        if (run.code !== 0 || run.stdout !== "" || run.stderr !== "") complain("receive --hook", run, "expected silence and exit 0");
        return run.ms;
      },
    },
    small: { label: `receive behind ${SMALL_HISTORY.toLocaleString("en")} read`, sample: receiveFrom(small) },
    large: { label: `receive behind ${LARGE_HISTORY.toLocaleString("en")} read`, sample: receiveFrom(large) },
  } satisfies Record<string, Case>;
}

/**
 * One delivered message leaves the cursor an agent has in steady state. Without it every receive that finds nothing
 * scans the whole mailbox, and such a receive never writes a cursor itself.
 */
async function primeCursor({ server, cwd }: Setup, mailbox: Fixture): Promise<void> {
  const id = appendUnread(mailbox);
  expectDelivered(`priming receive@${mailbox.to}`, await timedSpawn([BINARY, "receive"], server.agent(mailbox.to), cwd), id);
}

async function runRounds(cases: Case[], rounds: number): Promise<number[][]> {
  const samples = cases.map((): number[] => []);
  for (let round = 0; round < rounds; round++) {
    for (const [index, each] of cases.entries()) samples[index]!.push(await each.sample());
  }
  return samples;
}

// ---------------------------------------------------------------------------------------------------------------
// Throughput of parallel senders

interface Trial {
  messagesPerSecond: number;
  sendMs: number[];
  sendCpuMs: number[];
}

/** One trial into an empty mailbox, so afterwards it must hold exactly this trial's ids. */
async function throughputTrial(server: TmuxServer, cwd: string, crowd: Fixture): Promise<Trial> {
  for (const leftover of [crowd.path, `${crowd.path}.cursor`]) rmSync(leftover, { force: true });
  const expectedIds = new Set<string>();
  const sender = server.agent(WINDOWS.sender);
  const sendMs: number[] = [];
  const sendCpuMs: number[] = [];
  const oneSender = async (worker: number) => {
    for (let n = 0; n < MESSAGES_PER_SENDER; n++) {
      const run = await timedSpawn([BINARY, "send", crowd.to, `Parallel message ${n} from sender ${worker}`], sender, cwd);
      sendMs.push(run.ms);
      sendCpuMs.push(run.cpuMs);
      const id = run.stdout.trim();
      if (run.code !== 0 || !/^[A-Za-z0-9]{8}$/.test(id)) complain(`parallel send ${worker}/${n}`, run, "expected an 8-character id");
      else if (expectedIds.has(id)) complain(`parallel send ${worker}/${n}`, run, `id ${id} was printed twice`);
      else expectedIds.add(id);
    }
  };
  const start = performance.now();
  await Promise.all(Array.from({ length: PARALLEL_SENDERS }, (_, worker) => oneSender(worker)));
  const seconds = (performance.now() - start) / 1000;
  verifyMailbox(crowd, expectedIds);
  verifyNoLockLeft([crowd]);
  return { messagesPerSecond: (PARALLEL_SENDERS * MESSAGES_PER_SENDER) / seconds, sendMs, sendCpuMs };
}

// ---------------------------------------------------------------------------------------------------------------
// Report

const format = (ms: number) => ms.toFixed(2);
const verdict = (ratio: number, target: number) => (ratio <= target ? "PASS" : "FAIL");

/** Versions and load: other work on the machine moves every number, so the report says how busy it was. */
function environment(): string {
  const tmux = Bun.spawnSync(["tmux", "-V"]).stdout.toString().trim();
  return `bun ${Bun.version}, ${tmux}, ${availableParallelism()} cores, ${process.platform}, load average ${loadavg()[0]!.toFixed(2)}`;
}

function printTable(rows: { label: string; summary: Summary }[], floor: number): void {
  console.log("| command | median ms | p90 ms | ratio to floor |");
  console.log("|---|---:|---:|---:|");
  for (const { label, summary } of rows) {
    const p90 = summary.runs > 1 ? format(summary.p90) : "—";
    console.log(`| ${label} (n=${summary.runs}) | ${format(summary.median)} | ${p90} | ${(summary.median / floor).toFixed(2)} |`);
  }
}

function printRatio(name: string, ratio: number, target: number): void {
  console.log(`${name.padEnd(34)} ${ratio.toFixed(2).padStart(6)}   target ≤ ${target.toFixed(2)}   ${verdict(ratio, target)}`);
}

// ---------------------------------------------------------------------------------------------------------------

async function main(): Promise<void> {
  if (!existsSync(BINARY)) throw new Error(`${BINARY} does not exist; run npm run bench (it builds first)`);
  const repo = tempRepo("agentmail-bench-");
  let server: TmuxServer | null = null;
  const cleanUp = () => {
    server?.stop();
    server = null;
    repo.remove();
  };
  // A Ctrl-C skips finally blocks; the private tmux server must not outlive the benchmark.
  const onSignal = () => {
    cleanUp();
    process.exit(130);
  };
  process.once("SIGINT", onSignal);
  process.once("SIGTERM", onSignal);
  try {
    server = TmuxServer.start(Object.values(WINDOWS), repo.dir);
    mkdirSync(repo.mailDir, { recursive: true, mode: 0o700 });
    await benchmark({ server, cwd: repo.dir, mailDir: repo.mailDir });
  } finally {
    cleanUp();
  }
}

async function benchmark(setup: Setup): Promise<void> {
  const mailboxes = mailboxesIn(setup.mailDir);
  // The hook's agent has had mail before and read it all: the common case at the end of an agent's turn.
  writeReadHistory(mailboxes.idle, SMALL_HISTORY);
  await primeCursor(setup, mailboxes.idle);
  writeReadHistory(mailboxes.small, SMALL_HISTORY);
  writeReadHistory(mailboxes.large, LARGE_HISTORY);
  const named = latencyCases(setup, mailboxes);
  const cases: Case[] = Object.values(named);

  // The binary's 100 MiB must be in the page cache before anything is timed, or the first sample measures the disk.
  await runRounds([named.floor], 3);
  const coldSmall = await named.small.sample();
  const coldLarge = await named.large.sample();
  await runRounds(cases, WARMUP_ROUNDS);
  const samples = (await runRounds(cases, TIMED_ROUNDS)).map(summarize);

  const trials: Trial[] = [];
  for (let trial = 0; trial < THROUGHPUT_TRIALS; trial++) trials.push(await throughputTrial(setup.server, setup.cwd, mailboxes.crowd));
  verifyNoLockLeft([mailboxes.receiver, mailboxes.idle, mailboxes.small, mailboxes.large]);

  const byCase = new Map(cases.map((each, index) => [each, samples[index]!]));
  const medianOf = (each: Case) => byCase.get(each)!.median;
  const floor = medianOf(named.floor);
  const ratioOf = (each: Case) => medianOf(each) / floor;

  console.log(`\n## agentmail benchmark — ${TIMED_ROUNDS} interleaved rounds after ${WARMUP_ROUNDS} warm-up; ${environment()}\n`);
  printTable(
    [
      ...cases.map((each) => ({ label: each.label, summary: byCase.get(each)! })),
      { label: `cold: first receive behind ${SMALL_HISTORY.toLocaleString("en")} read, no cursor yet`, summary: summarize([coldSmall]) },
      { label: `cold: first receive behind ${LARGE_HISTORY.toLocaleString("en")} read, no cursor yet`, summary: summarize([coldLarge]) },
    ],
    floor,
  );
  console.log("");
  printRatio("send / floor", ratioOf(named.send), LATENCY_TARGET);
  printRatio("receive / floor", ratioOf(named.receive), LATENCY_TARGET);
  printRatio("receive --hook / floor", ratioOf(named.hook), LATENCY_TARGET);
  printRatio("receive@100k / receive@100", medianOf(named.large) / medianOf(named.small), HISTORY_TARGET);

  const rates = trials.map((trial) => trial.messagesPerSecond);
  const contended = summarize(trials.flatMap((trial) => trial.sendMs));
  // When every core is busy, CPU per send, not the mailbox lock, sets the ceiling.
  const cpuPerSend = summarize(trials.flatMap((trial) => trial.sendCpuMs)).median;
  console.log(
    `throughput, ${PARALLEL_SENDERS} parallel senders × ${MESSAGES_PER_SENDER} messages: ${summarize(rates).median.toFixed(0)} messages/s ` +
      `(median of ${THROUGHPUT_TRIALS} trials: ${rates.map((rate) => rate.toFixed(0)).join(", ")}); ` +
      `one send under that load: median ${format(contended.median)} ms, p90 ${format(contended.p90)} ms`,
  );
  console.log(
    `CPU per send (agentmail + its tmux client): median ${format(cpuPerSend)} ms, so ${availableParallelism()} cores cap throughput near ` +
      `${((availableParallelism() * 1000) / cpuPerSend).toFixed(0)} messages/s`,
  );

  if (problems.length > 0) {
    console.log(`\nCORRECTNESS FAILURES (${problems.length}):`);
    for (const problem of problems) console.log(`- ${problem}`);
    process.exitCode = 1;
  } else {
    console.log(
      `\ncorrectness: every timed run gave the expected output; after each throughput trial the mailbox held exactly the ${PARALLEL_SENDERS * MESSAGES_PER_SENDER} ids the senders printed, each once, and every line parsed; no lock left behind`,
    );
  }
}

await main();
