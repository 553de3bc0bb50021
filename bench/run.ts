/**
 * What one agentmail call costs, measured against the compiled binary (dist/agentmail) in a private tmux server
 * and a throwaway git repository (mail in its .git/mail).
 *
 *   floor          the tmux call agentmail makes to learn who is calling (`display-message -t <pane> … ;
 *                  list-windows -a …`), then `agentmail --version`, timed as one unit: the least a command that must
 *                  ask tmux can cost (one tmux client + one start-up). Its two halves are timed on their own too.
 *   send           to another window
 *   receive        with one unread message waiting (the one the send of the same round delivered)
 *   receive, an inbox written by another program: ~200 unread lines as Python's json.dumps writes them (spaces
 *                  after colons and commas, non-ASCII as \u escapes, every other line with its keys sorted):
 *                  "first" is the first receive, before any cursor exists (the mailbox is restored before each
 *                  sample); "steady" takes one message a round from the same inbox once its cursor exists
 *   receive --hook with no unread mail (the agent has read 100 messages before, so it has a cursor), and on the inbox
 *   receive@100 / receive@100k   behind 100 / 100,000 read messages, cursor in place (the steady state); the first
 *                  receive of each, which finds no cursor and scans the whole mailbox, is reported once as "cold"
 *   AGENTMAIL_NAME the same agents' send, receive (the inbox, steady) and receive --hook (no mail) with a claimed
 *                  name, which needs no tmux call, against the references below
 *   references     bench/reference/*.ts, compiled like dist/agentmail: a hello world, and a hello world plus the
 *                  file work of a named send and receive (the same file-system calls in the same order, straight
 *                  through), run in a store of their own
 *   Go             the Go AgentMail (../shared/anchors/agentmail-go-linux-x64, a static build of the program the spec
 *                  describes; see its README) when present: its send, its receive with one message waiting and
 *                  with none, and its receive --hook with none, in its own store (.agentmail/ at the repository's top)
 *   hook command   the Stop hook `hooks install` writes, run as agents run it (`sh -c`), with no mail: the doorbell
 *                  (src/hooks/hook-commands.ts) is quiet, so agentmail does not start
 *   throughput     8 concurrent sending processes × 100 messages into one mailbox, on the file store, on Redis (a
 *                  private redis-server, AOF always) and for the Go AgentMail, then checked: every id a sender
 *                  printed is in the mailbox exactly once and every line parses
 *
 * The timed commands run round-robin, one of each per round, so a change in machine load hits all of them alike.
 * Wall time is what a user waits; CPU time (user + system of the process and the children it reaped) moves less
 * when other work shares the machine, so both are shown.
 *
 * Run:  npm run bench                      (builds dist/agentmail first)
 *       node_modules/.bin/bun bench/run.ts  (uses the binary already built)
 * Exits 0 whatever the timings (it is a report, not a test); exits 1 if a correctness check failed.
 */
import { appendFileSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { availableParallelism, loadavg } from "node:os";
import { basename, dirname, join } from "node:path";
import { BUNDLE, EXECUTABLE } from "../build.ts";
import { findGo } from "./go.ts";
import { hookCommand } from "../src/hooks/hook-commands.ts";
import { BINARY as BUILT, tempRepo } from "../test/support/repo.ts";
import { RedisServer } from "../test/support/redis-server.ts";
import { TmuxServer, type Agent } from "../test/support/tmux-server.ts";
import { lookupArgv, summarize, timedFloor, timedSpawn, type Run, type Summary } from "./timing.ts";

/** The binary measured: dist/agentmail, or another build given as BENCH_BINARY (say, main's, for a before/after). */
const BINARY = process.env.BENCH_BINARY ?? BUILT;

const TIMED_ROUNDS = Number(process.env.BENCH_ROUNDS ?? 50);
const WARMUP_ROUNDS = Math.min(5, TIMED_ROUNDS);
const SMALL_HISTORY = 100;
const LARGE_HISTORY = 100_000;
const INBOX_SIZE = 200;
/** The steady inbox is restored (and its cursor made again, untimed) when fewer unread lines than this are left. */
const INBOX_LOW = 20;
const PARALLEL_SENDERS = 8;
const MESSAGES_PER_SENDER = Number(process.env.BENCH_PER_SENDER ?? 100);

const GO = findGo();
/** Issue 27's targets against Go and the floor. */
const HOOK_COMMAND_TARGET = 0.5;
const GO_TARGET = 1.25;
const NAMED_GO_TARGET = 1.0;

const LATENCY_TARGET = 1.25;
const INBOX_TARGET = 1.15;
const HOOK_TARGET = 1.1;
const NAMED_TARGET = 1.1;
const HISTORY_TARGET = 1.5;

/** Window names are plain [a-z0-9], so each mailbox file name is the name itself (no percent-encoding). */
const WINDOWS = {
  sender: "alice",
  receiver: "bob",
  idle: "idle",
  small: "hist100",
  large: "hist100k",
  crowd: "crowd",
  inbox: "inbox",
  freshInbox: "fresh",
  hookInbox: "hookinbox",
  namedSender: "named",
  namedInbox: "ninbox",
  namedIdle: "nidle",
  namedSink: "nsink",
  namedCrowd: "ncrowd",
  goSender: "goa",
  goReceiver: "gob",
  goIdle: "goidle",
  quiet: "quiet",
} as const;

// ---------------------------------------------------------------------------------------------------------------
// Spawning

const named = (agent: Agent): Agent => ({ ...agent, env: { ...agent.env, AGENTMAIL_NAME: agent.name } });

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
function fixtureId(prefix: "H" | "U" | "P", n: number): string {
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

/** JSON as Python's json.dumps writes it: `", "` and `": "` between items, every non-ASCII character as a \u escape. */
function pythonJson(record: Record<string, unknown>): string {
  const ascii = (text: string) => text.replace(/[\u0080-\uffff]/g, (char) => `\\u${char.charCodeAt(0).toString(16).padStart(4, "0")}`);
  return (
    "{" +
    Object.entries(record)
      .map(([key, value]) => `${JSON.stringify(key)}: ${ascii(JSON.stringify(value))}`)
      .join(", ") +
    "}"
  );
}

/** An inbox another program wrote: INBOX_SIZE unread lines, oldest first; every other line has its keys sorted. */
function inboxText(to: string): { text: string; ids: string[] } {
  const ids: string[] = [];
  const lines: string[] = [];
  for (let n = 0; n < INBOX_SIZE; n++) {
    const id = fixtureId("P", n);
    ids.push(id);
    const body = `Review ${n}: the café build on main is green again; please look at PR #${n} when you can.`;
    const createdAt = new Date(Date.UTC(2025, 0, 2) + n * 1000).toISOString();
    const record = { id, from: WINDOWS.sender, to, message: body, read_flag: false, created_at: createdAt };
    const sorted = Object.fromEntries(Object.entries(record).sort(([a], [b]) => a.localeCompare(b)));
    lines.push(pythonJson(n % 2 === 0 ? record : sorted) + "\n");
  }
  return { text: lines.join(""), ids };
}

/** An inbox restored to its first state: the mailbox written again, no cursor, no read journal, no lock. */
class Inbox {
  readonly ids: string[];
  private readonly text: string;
  taken = 0;

  constructor(readonly mailbox: Fixture) {
    ({ text: this.text, ids: this.ids } = inboxText(mailbox.to));
  }

  restore(): void {
    const dir = dirname(this.mailbox.path);
    for (const file of readdirSync(dir)) if (file.startsWith(`${basename(this.mailbox.path)}.`)) rmSync(join(dir, file), { force: true });
    writeFileSync(this.mailbox.path, this.text, { mode: 0o600 });
    this.taken = 0;
  }

  next(): string {
    return this.ids[this.taken++]!;
  }
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

function expectDelivered(what: string, run: Run, id: string, stream: "stdout" | "stderr" = "stdout", code = 0): void {
  if (run.code !== code || !run[stream].includes(`\nID: ${id}\n`)) complain(what, run, `expected message ${id}`);
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
// The references: bench/reference/*.ts compiled as build.ts compiles agentmail, run in a store of their own

interface References {
  dir: string;
  repo: { dir: string; mailDir: string; remove(): void };
}

async function buildReferences(): Promise<References> {
  const repo = tempRepo("agentmail-bench-reference-");
  const dir = join(repo.dir, ".bin");
  for (const name of ["hello", "send", "receive", "look"]) {
    const result = await Bun.build({
      entrypoints: [join(import.meta.dir, "reference", `${name}.ts`)],
      // Built as agentmail is, so a reference differs from it only in the code it runs.
      ...BUNDLE,
      compile: { outfile: join(dir, name), ...EXECUTABLE },
    });
    if (!result.success) throw new Error(`cannot build bench/reference/${name}.ts: ${result.logs.join("\n")}`);
  }
  mkdirSync(join(repo.mailDir, ".agents"), { recursive: true, mode: 0o700 });
  for (const name of [WINDOWS.namedSender, WINDOWS.namedInbox, WINDOWS.namedSink, WINDOWS.namedIdle]) {
    writeFileSync(join(repo.mailDir, ".agents", `${name}.json`), JSON.stringify({ name, status: "ready", pane: "%0" }) + "\n");
  }
  writeFileSync(join(repo.mailDir, `${WINDOWS.namedSink}.jsonl`), "");
  restoreReferenceInbox(repo.mailDir);
  // The hook's reference: a read history and a cursor past its last line.
  const idle = mailboxOf(repo.mailDir, WINDOWS.namedIdle);
  writeReadHistory(idle, SMALL_HISTORY);
  const history = readFileSync(idle.path);
  const lastLine = history.lastIndexOf(10, history.length - 2) + 1;
  const header = `c3 0 ${lastLine} ${history.length} 00000000 128 1024 0`.padEnd(127) + "\n";
  writeFileSync(`${idle.path}.cursor`, Buffer.concat([Buffer.from(header), Buffer.alloc(8192)]));
  return { dir, repo };
}

/** The reference receive's inbox and a cursor at offset 0, whose header only the reference reads. */
function restoreReferenceInbox(mailDir: string): void {
  const path = join(mailDir, `${WINDOWS.namedInbox}.jsonl`);
  writeFileSync(path, inboxText(WINDOWS.namedInbox).text);
  rmSync(`${path}.reads`, { force: true });
  writeFileSync(`${path}.cursor`, Buffer.concat([Buffer.from("c3 0 0 0 00000000 128 1024 0".padEnd(127) + "\n"), Buffer.alloc(8192)]));
}

// ---------------------------------------------------------------------------------------------------------------
// The interleaved latency benchmark

interface Case {
  label: string;
  /** Runs one timed sample; anything done before `timedSpawn` (writing fixtures) is outside the timed region. */
  sample(): Promise<Run>;
}

interface Setup {
  server: TmuxServer;
  cwd: string;
  mailDir: string;
  references: References;
}

function latencyCases({ server, cwd, mailDir, references }: Setup) {
  const agent = (name: string) => server.agent(name);
  const sender = agent(WINDOWS.sender);
  const receiver = agent(WINDOWS.receiver);
  const small = mailboxOf(mailDir, WINDOWS.small);
  const large = mailboxOf(mailDir, WINDOWS.large);
  const firstInbox = new Inbox(mailboxOf(mailDir, WINDOWS.freshInbox));
  const steadyInbox = new Inbox(mailboxOf(mailDir, WINDOWS.inbox));
  const hookInbox = new Inbox(mailboxOf(mailDir, WINDOWS.hookInbox));
  const namedInbox = new Inbox(mailboxOf(mailDir, WINDOWS.namedInbox));
  let sentToReceiver = "";
  let referenceTaken = 0;

  const receiveFrom = (mailbox: Fixture) => async () => {
    const id = appendUnread(mailbox);
    const run = await timedSpawn([BINARY, "receive"], agent(mailbox.to), cwd);
    expectDelivered(`receive@${mailbox.to}`, run, id);
    return run;
  };

  /**
   * Keeps an inbox in steady state: a cursor exists, and enough unread lines are left. `fresh`: none of them put in
   * front of the agent yet, as the hook needs (a hook shows 5 and lists the rest, which no later hook announces again).
   */
  const steady = async (inbox: Inbox, env: Agent, fresh = false) => {
    if (!fresh && inbox.taken > 0 && inbox.ids.length - inbox.taken >= INBOX_LOW) return;
    inbox.restore();
    expectDelivered(`priming receive@${inbox.mailbox.to}`, await timedSpawn([BINARY, "receive"], env, cwd), inbox.next());
  };

  const reference = (name: string) => join(references.dir, name);

  return {
    floor: {
      label: "floor: tmux lookup + agentmail --version",
      async sample() {
        const run = await timedFloor(sender, cwd);
        if (run.code !== 0 || !run.stdout.startsWith(`AMmarker00self\t`)) complain("floor", run, "expected the lookup, then the version");
        return run;
      },
    },
    tmuxAlone: { label: "floor part: the tmux lookup alone", sample: () => timedSpawn(lookupArgv(sender), sender, cwd) },
    versionAlone: { label: "floor part: agentmail --version alone", sample: () => timedSpawn([BINARY, "--version"], sender, cwd) },
    hello: {
      label: "reference: compiled Bun hello world",
      async sample() {
        const run = await timedSpawn([reference("hello")], sender, references.repo.dir);
        if (run.stdout !== "hello\n") complain("hello", run, "expected hello");
        return run;
      },
    },
    referenceSend: {
      label: "reference: hello world + a named send's file work",
      async sample() {
        const argv = [reference("send"), WINDOWS.namedSink, "Round message: the tests pass."];
        const run = await timedSpawn(argv, named(agent(WINDOWS.namedSender)), references.repo.dir);
        if (run.code !== 0 || run.stdout !== "AbCdEfGh\n") complain("reference send", run, "expected its id");
        return run;
      },
    },
    referenceReceive: {
      label: "reference: hello world + a named receive's file work",
      async sample() {
        if (referenceTaken >= INBOX_SIZE - INBOX_LOW) {
          restoreReferenceInbox(references.repo.mailDir);
          referenceTaken = 0;
        }
        const run = await timedSpawn([reference("receive")], named(agent(WINDOWS.namedInbox)), references.repo.dir);
        expectDelivered("reference receive", run, fixtureId("P", referenceTaken++));
        return run;
      },
    },
    referenceLook: {
      label: "reference: hello world + a named hook's file work, no mail",
      async sample() {
        const run = await timedSpawn([reference("look")], named(agent(WINDOWS.namedIdle)), references.repo.dir);
        if (run.code !== 0 || run.stdout !== "" || run.stderr !== "") complain("reference look", run, "expected silence and exit 0");
        return run;
      },
    },
    send: {
      label: "send (to another window)",
      async sample() {
        const run = await timedSpawn([BINARY, "send", WINDOWS.receiver, "Round message: the tests pass on my side."], sender, cwd);
        sentToReceiver = run.stdout.trim();
        if (run.code !== 0 || !/^[A-Za-z0-9]{8}$/.test(sentToReceiver)) complain("send", run, "expected an 8-character id");
        return run;
      },
    },
    receive: {
      label: "receive (1 unread waiting)",
      async sample() {
        const run = await timedSpawn([BINARY, "receive"], receiver, cwd);
        expectDelivered("receive", run, sentToReceiver);
        return run;
      },
    },
    inboxFirst: {
      label: `receive, inbox of ${INBOX_SIZE} unread by another program: first, no cursor yet`,
      async sample() {
        firstInbox.restore();
        const run = await timedSpawn([BINARY, "receive"], agent(WINDOWS.freshInbox), cwd);
        expectDelivered("receive, inbox first", run, firstInbox.next());
        return run;
      },
    },
    inboxSteady: {
      label: `receive, inbox of ${INBOX_SIZE} unread by another program: steady`,
      async sample() {
        await steady(steadyInbox, agent(WINDOWS.inbox));
        const run = await timedSpawn([BINARY, "receive"], agent(WINDOWS.inbox), cwd);
        expectDelivered("receive, inbox steady", run, steadyInbox.next());
        return run;
      },
    },
    hook: {
      label: "receive --hook (no unread mail)",
      async sample() {
        const run = await timedSpawn([BINARY, "receive", "--hook"], agent(WINDOWS.idle), cwd);
        if (run.code !== 0 || run.stdout !== "" || run.stderr !== "") complain("receive --hook", run, "expected silence and exit 0");
        return run;
      },
    },
    hookInbox: {
      label: "receive --hook, the inbox (cursor made, all fresh)",
      async sample() {
        await steady(hookInbox, agent(WINDOWS.hookInbox), true);
        const run = await timedSpawn([BINARY, "receive", "--hook"], agent(WINDOWS.hookInbox), cwd);
        expectDelivered("receive --hook, inbox", run, hookInbox.next(), "stderr", 2);
        return run;
      },
    },
    small: { label: `receive behind ${SMALL_HISTORY.toLocaleString("en")} read`, sample: receiveFrom(small) },
    large: { label: `receive behind ${LARGE_HISTORY.toLocaleString("en")} read`, sample: receiveFrom(large) },
    namedSend: {
      label: "AGENTMAIL_NAME: send",
      async sample() {
        const argv = [BINARY, "send", WINDOWS.namedSink, "Round message: the tests pass."];
        const run = await timedSpawn(argv, named(agent(WINDOWS.namedSender)), cwd);
        if (run.code !== 0 || !/^[A-Za-z0-9]{8}\n$/.test(run.stdout)) complain("named send", run, "expected an 8-character id");
        return run;
      },
    },
    namedReceive: {
      label: "AGENTMAIL_NAME: receive, the inbox (steady)",
      async sample() {
        await steady(namedInbox, named(agent(WINDOWS.namedInbox)));
        const run = await timedSpawn([BINARY, "receive"], named(agent(WINDOWS.namedInbox)), cwd);
        expectDelivered("named receive", run, namedInbox.next());
        return run;
      },
    },
    hookCommand: {
      label: "the installed Stop hook command (sh -c, doorbell quiet: no mail)",
      async sample() {
        const run = await timedSpawn(["sh", "-c", hookCommand.delivery(BINARY)], agent(WINDOWS.quiet), cwd);
        if (run.code !== 0 || run.stdout !== "" || run.stderr !== "") complain("hook command", run, "expected silence and exit 0");
        return run;
      },
    },
    namedHook: {
      label: "AGENTMAIL_NAME: receive --hook (no unread mail)",
      async sample() {
        const run = await timedSpawn([BINARY, "receive", "--hook"], named(agent(WINDOWS.namedIdle)), cwd);
        if (run.code !== 0 || run.stdout !== "" || run.stderr !== "") complain("named receive --hook", run, "expected silence and exit 0");
        return run;
      },
    },
  } satisfies Record<string, Case>;
}

/** The Go AgentMail's commands, each in its own store (.agentmail/ at the repository's top), when it is there. */
function goCases({ server, cwd }: Setup, go: string): Record<string, Case> {
  let sent = "";
  const as = (name: string) => server.agent(name);
  return {
    goSend: {
      label: "Go AgentMail: send (to another window)",
      async sample() {
        const run = await timedSpawn(
          [go, "send", WINDOWS.goReceiver, "Round message: the tests pass on my side."],
          as(WINDOWS.goSender),
          cwd,
        );
        sent = /^Message #([A-Za-z0-9]{8}) sent\n$/.exec(run.stdout)?.[1] ?? "";
        if (run.code !== 0 || sent === "") complain("go send", run, "expected Message #<id> sent");
        return run;
      },
    },
    goReceive: {
      label: "Go AgentMail: receive (1 unread waiting)",
      async sample() {
        const run = await timedSpawn([go, "receive"], as(WINDOWS.goReceiver), cwd);
        if (run.code !== 0 || !run.stdout.includes(`\nID: ${sent}\n`)) complain("go receive", run, `expected message ${sent}`);
        return run;
      },
    },
    goReceiveNone: {
      label: "Go AgentMail: receive (no unread mail)",
      async sample() {
        const run = await timedSpawn([go, "receive"], as(WINDOWS.goIdle), cwd);
        if (run.code !== 0 || run.stdout !== "No unread messages\n") complain("go receive, none", run, "expected No unread messages");
        return run;
      },
    },
    goHookNone: {
      label: "Go AgentMail: receive --hook (no unread mail)",
      async sample() {
        const run = await timedSpawn([go, "receive", "--hook"], as(WINDOWS.goIdle), cwd);
        if (run.code !== 0 || run.stdout !== "" || run.stderr !== "") complain("go receive --hook", run, "expected silence and exit 0");
        return run;
      },
    },
  };
}

/**
 * One delivered message leaves the cursor an agent has in steady state. Without it every receive that finds nothing
 * scans the whole mailbox, and such a receive never writes a cursor itself.
 */
async function primeCursor(server: TmuxServer, cwd: string, mailbox: Fixture, env: Agent = server.agent(mailbox.to)): Promise<void> {
  const id = appendUnread(mailbox);
  expectDelivered(`priming receive@${mailbox.to}`, await timedSpawn([BINARY, "receive"], env, cwd), id);
}

/** The named agents claim their names, as their SessionStart hook would: `agentmail status ready` in their panes. */
async function claimNames(server: TmuxServer, cwd: string, mailDir: string): Promise<void> {
  for (const name of [WINDOWS.namedSender, WINDOWS.namedInbox, WINDOWS.namedIdle, WINDOWS.namedSink, WINDOWS.namedCrowd]) {
    const run = await timedSpawn([BINARY, "status", "ready"], named(server.agent(name)), cwd);
    const record = JSON.parse(readFileSync(join(mailDir, ".agents", `${name}.json`), "utf8")) as { claim_server?: string };
    if (run.code !== 0 || !record.claim_server) complain(`claim ${name}`, run, "expected a claim (claim_server) in the registration");
  }
}

async function runRounds(cases: Case[], rounds: number): Promise<Run[][]> {
  const samples = cases.map((): Run[] => []);
  for (let round = 0; round < rounds; round++) {
    for (const [index, each] of cases.entries()) samples[index]!.push(await each.sample());
  }
  return samples;
}

// ---------------------------------------------------------------------------------------------------------------
// Throughput of parallel senders

interface Trial {
  label: string;
  messagesPerSecond: number;
  sendMs: number[];
  sendCpuMs: number[];
}

interface Sender {
  label: string;
  argv(worker: number, n: number): string[];
  env: Agent;
  cwd: string;
  /** The id a send printed, or null when its output is not a send's. */
  idOf(stdout: string): string | null;
  /** The ids stored in the mailbox after the trial, each as often as stored; null when it cannot be read. */
  stored(): Promise<string[] | null>;
}

/** One trial: 8 processes × 100 sends into one empty mailbox; afterwards it must hold exactly the ids printed. */
async function throughputTrial(sender: Sender): Promise<Trial> {
  const printed = new Set<string>();
  const sendMs: number[] = [];
  const sendCpuMs: number[] = [];
  const oneSender = async (worker: number) => {
    for (let n = 0; n < MESSAGES_PER_SENDER; n++) {
      const run = await timedSpawn(sender.argv(worker, n), sender.env, sender.cwd);
      sendMs.push(run.ms);
      sendCpuMs.push(run.cpuMs);
      const id = sender.idOf(run.stdout);
      if (run.code !== 0 || id === null) complain(`${sender.label} ${worker}/${n}`, run, "expected a sent message's id");
      else if (printed.has(id)) complain(`${sender.label} ${worker}/${n}`, run, `id ${id} was printed twice`);
      else printed.add(id);
    }
  };
  const start = performance.now();
  await Promise.all(Array.from({ length: PARALLEL_SENDERS }, (_, worker) => oneSender(worker)));
  const seconds = (performance.now() - start) / 1000;
  const stored = await sender.stored();
  if (stored === null) problems.push(`${sender.label}: the mailbox could not be read after the trial`);
  else {
    const counts = new Map<string, number>();
    for (const id of stored) counts.set(id, (counts.get(id) ?? 0) + 1);
    const missing = [...printed].filter((id) => counts.get(id) !== 1);
    if (missing.length > 0 || stored.length !== printed.size) {
      problems.push(`${sender.label}: ${stored.length} stored for ${printed.size} printed; ${missing.length} not stored exactly once`);
    }
  }
  return { label: sender.label, messagesPerSecond: (PARALLEL_SENDERS * MESSAGES_PER_SENDER) / seconds, sendMs, sendCpuMs };
}

/** The ids on the lines of a JSONL file (every line must parse), or null when it cannot be read. */
function idsOnLines(path: string): string[] | null {
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch {
    return null;
  }
  const ids: string[] = [];
  for (const line of text.split("\n").filter(Boolean)) {
    try {
      ids.push(String((JSON.parse(line) as { id?: unknown }).id));
    } catch {
      problems.push(`${path}: a line does not parse: ${JSON.stringify(line.slice(0, 120))}`);
    }
  }
  return ids;
}

/** The senders of the throughput trials: agentmail on the file store and on Redis, and the Go AgentMail. */
function senders(setup: Setup, crowd: Fixture, namedCrowd: Fixture, redisUrl: string): Sender[] {
  const { server, cwd } = setup;
  const sender = server.agent(WINDOWS.sender);
  const body = (worker: number, n: number) => `Parallel message ${n} from sender ${worker}`;
  const ours = (id: string) => (/^[A-Za-z0-9]{8}\n$/.test(id) ? id.trim() : null);
  const onRedis: Agent = { ...sender, env: { ...sender.env, AGENTMAIL_URL: redisUrl, AGENTMAIL_NAMESPACE: "bench-throughput" } };
  const list: Sender[] = [
    {
      label: "agentmail, file store",
      argv: (worker, n) => [BINARY, "send", crowd.to, body(worker, n)],
      env: sender,
      cwd,
      idOf: ours,
      stored: async () => idsOnLines(crowd.path),
    },
    {
      label: "agentmail, file store, AGENTMAIL_NAME",
      argv: (worker, n) => [BINARY, "send", namedCrowd.to, body(worker, n)],
      env: named(server.agent(WINDOWS.namedSender)),
      cwd,
      idOf: ours,
      stored: async () => idsOnLines(namedCrowd.path),
    },
    {
      label: "agentmail, Redis (unix socket)",
      argv: (worker, n) => [BINARY, "send", crowd.to, body(worker, n)],
      env: onRedis,
      cwd,
      idOf: ours,
      async stored() {
        const owner = server.agent(crowd.to);
        const reader = { ...owner, env: { ...owner.env, AGENTMAIL_URL: redisUrl, AGENTMAIL_NAMESPACE: "bench-throughput" } };
        const inbox = await timedSpawn([BINARY, "inbox", "--all", "--json"], reader, cwd);
        try {
          return (JSON.parse(inbox.stdout) as { id: string }[]).map((message) => message.id);
        } catch {
          return null;
        }
      },
    },
  ];
  if (GO) {
    list.unshift({
      label: "Go AgentMail",
      argv: (worker, n) => [GO, "send", crowd.to, body(worker, n)],
      env: sender,
      cwd,
      idOf: (stdout) => /^Message #([A-Za-z0-9]{8}) sent\n$/.exec(stdout)?.[1] ?? null,
      stored: async () => idsOnLines(join(cwd, ".agentmail", "mailboxes", `${crowd.to}.jsonl`)),
    });
  }
  return list;
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

interface Row {
  label: string;
  wall: Summary;
  cpu: Summary;
}

function printTable(rows: Row[], floor: Row): void {
  console.log("| command | median ms | p90 ms | CPU ms | ratio to floor | CPU ratio |");
  console.log("|---|---:|---:|---:|---:|---:|");
  for (const { label, wall, cpu } of rows) {
    const p90 = wall.runs > 1 ? format(wall.p90) : "—";
    const ratios = `${(wall.median / floor.wall.median).toFixed(2)} | ${(cpu.median / floor.cpu.median).toFixed(2)}`;
    console.log(`| ${label} (n=${wall.runs}) | ${format(wall.median)} | ${p90} | ${format(cpu.median)} | ${ratios} |`);
  }
}

function printRatio(name: string, of: Row, to: Row, target: number): void {
  const wall = of.wall.median / to.wall.median;
  const cpu = of.cpu.median / to.cpu.median;
  const ratios = `${wall.toFixed(2).padStart(6)}  (CPU ${cpu.toFixed(2)})`;
  console.log(`${name.padEnd(46)} ${ratios}   target ≤ ${target.toFixed(2)}   ${verdict(wall, target)}`);
}

// ---------------------------------------------------------------------------------------------------------------

async function main(): Promise<void> {
  if (!existsSync(BINARY)) throw new Error(`${BINARY} does not exist; run npm run bench (it builds first)`);
  const repo = tempRepo("agentmail-bench-");
  let references: References | null = null;
  let server: TmuxServer | null = null;
  let redis: RedisServer | null = null;
  const cleanUp = () => {
    server?.stop();
    server = null;
    void redis?.remove();
    redis = null;
    repo.remove();
    references?.repo.remove();
  };
  // A Ctrl-C skips finally blocks; the private tmux server must not outlive the benchmark.
  const onSignal = () => {
    cleanUp();
    process.exit(130);
  };
  process.once("SIGINT", onSignal);
  process.once("SIGTERM", onSignal);
  try {
    references = await buildReferences();
    server = TmuxServer.start(Object.values(WINDOWS), repo.dir);
    redis = await RedisServer.start();
    mkdirSync(repo.mailDir, { recursive: true, mode: 0o700 });
    await benchmark({ server, cwd: repo.dir, mailDir: repo.mailDir, references }, redis.url);
  } finally {
    cleanUp();
  }
}

/** The quiet agent's Stop hook, as after its first turn: its pane points at its doorbell, which is quiet. */
async function quietDoorbell(server: TmuxServer, cwd: string): Promise<void> {
  const agent = server.agent(WINDOWS.quiet);
  const status = await timedSpawn([BINARY, "status", "ready"], agent, cwd);
  const first = await timedSpawn(["sh", "-c", hookCommand.delivery(BINARY)], agent, cwd);
  if (status.code !== 0 || first.code !== 0) complain("quiet doorbell", first, "expected the first hook to find no mail");
}

async function benchmark(setup: Setup, redisUrl: string): Promise<void> {
  const { server, cwd, mailDir } = setup;
  const idle = mailboxOf(mailDir, WINDOWS.idle);
  const namedIdle = mailboxOf(mailDir, WINDOWS.namedIdle);
  const small = mailboxOf(mailDir, WINDOWS.small);
  const large = mailboxOf(mailDir, WINDOWS.large);
  const crowd = mailboxOf(mailDir, WINDOWS.crowd);
  await claimNames(server, cwd, mailDir);
  // The hooks' agents have had mail before and read it all: the common case at the end of an agent's turn.
  writeReadHistory(idle, SMALL_HISTORY);
  await primeCursor(server, cwd, idle);
  writeReadHistory(namedIdle, SMALL_HISTORY);
  await primeCursor(server, cwd, namedIdle, named(server.agent(WINDOWS.namedIdle)));
  writeReadHistory(small, SMALL_HISTORY);
  writeReadHistory(large, LARGE_HISTORY);
  await quietDoorbell(server, cwd);
  const timed = latencyCases(setup);
  const go = GO ? goCases(setup, GO) : null;
  const cases: Case[] = [...Object.values(timed), ...Object.values(go ?? {})];

  // The binary's 100 MiB must be in the page cache before anything is timed, or the first sample measures the disk.
  await runRounds([timed.floor, timed.hello], 3);
  const coldSmall = await timed.small.sample();
  const coldLarge = await timed.large.sample();
  await runRounds(cases, WARMUP_ROUNDS);
  const samples = await runRounds(cases, TIMED_ROUNDS);

  const trials: Trial[] = [];
  for (const sender of senders(setup, crowd, mailboxOf(mailDir, WINDOWS.namedCrowd), redisUrl)) trials.push(await throughputTrial(sender));
  const timedMailboxes = ["bob", "idle", "hist100", "hist100k", "inbox", "fresh", "hookinbox", "ninbox", "nidle", "nsink", "crowd"];
  verifyNoLockLeft(timedMailboxes.map((name) => mailboxOf(mailDir, name)));

  const rowOf = (label: string, runs: Run[]): Row => ({
    label,
    wall: summarize(runs.map((run) => run.ms)),
    cpu: summarize(runs.map((run) => run.cpuMs)),
  });
  const rows = new Map(cases.map((each, index) => [each, rowOf(each.label, samples[index]!)]));
  const row = (each: Case) => rows.get(each)!;
  const floor = row(timed.floor);

  console.log(`\n## agentmail benchmark — ${TIMED_ROUNDS} interleaved rounds after ${WARMUP_ROUNDS} warm-up; ${environment()}\n`);
  printTable(
    [
      ...rows.values(),
      rowOf(`cold: first receive behind ${SMALL_HISTORY.toLocaleString("en")} read, no cursor yet`, [coldSmall]),
      rowOf(`cold: first receive behind ${LARGE_HISTORY.toLocaleString("en")} read, no cursor yet`, [coldLarge]),
    ],
    floor,
  );
  console.log("");
  printRatio("send / floor", row(timed.send), floor, LATENCY_TARGET);
  printRatio("receive (1 unread) / floor", row(timed.receive), floor, LATENCY_TARGET);
  printRatio("receive, inbox, first / floor", row(timed.inboxFirst), floor, INBOX_TARGET);
  printRatio("receive, inbox, steady / floor", row(timed.inboxSteady), floor, INBOX_TARGET);
  printRatio("receive --hook (no mail) / floor", row(timed.hook), floor, HOOK_TARGET);
  printRatio("Stop hook command (no mail) / floor", row(timed.hookCommand), floor, HOOK_COMMAND_TARGET);
  printRatio("receive@100k / receive@100", row(timed.large), row(timed.small), HISTORY_TARGET);
  printRatio("AGENTMAIL_NAME send / reference send", row(timed.namedSend), row(timed.referenceSend), NAMED_TARGET);
  printRatio("AGENTMAIL_NAME receive / reference receive", row(timed.namedReceive), row(timed.referenceReceive), NAMED_TARGET);
  printRatio("AGENTMAIL_NAME receive --hook / reference look", row(timed.namedHook), row(timed.referenceLook), NAMED_TARGET);
  if (go) {
    printRatio("Stop hook command (no mail) / Go receive (none)", row(timed.hookCommand), row(go.goReceiveNone!), HOOK_COMMAND_TARGET);
    printRatio("send / Go send", row(timed.send), row(go.goSend!), GO_TARGET);
    printRatio("receive (1 unread) / Go receive", row(timed.receive), row(go.goReceive!), GO_TARGET);
    printRatio("receive --hook (no mail) / Go receive --hook", row(timed.hook), row(go.goHookNone!), GO_TARGET);
    printRatio("AGENTMAIL_NAME send / Go send", row(timed.namedSend), row(go.goSend!), NAMED_GO_TARGET);
    printRatio("AGENTMAIL_NAME receive / Go receive", row(timed.namedReceive), row(go.goReceive!), NAMED_GO_TARGET);
  } else console.log("(no Go AgentMail found beside the project: ../shared/anchors/agentmail-go-linux-x64; its ratios are left out)");
  const hello = row(timed.hello);
  console.log(
    `references: hello world ${format(hello.wall.median)} ms (CPU ${format(hello.cpu.median)}); the file work adds ` +
      `${format(row(timed.referenceSend).wall.median - hello.wall.median)} ms to a send and ` +
      `${format(row(timed.referenceReceive).wall.median - hello.wall.median)} ms to a receive and ` +
      `${format(row(timed.referenceLook).wall.median - hello.wall.median)} ms to a hook that finds nothing (node:fs included)`,
  );

  console.log(`\nthroughput, ${PARALLEL_SENDERS} sending processes × ${MESSAGES_PER_SENDER} messages into one mailbox:`);
  const goRate = trials.find((trial) => trial.label === "Go AgentMail")?.messagesPerSecond;
  for (const trial of trials) {
    const contended = summarize(trial.sendMs);
    const cpu = summarize(trial.sendCpuMs).median;
    const ratio = goRate && trial.label !== "Go AgentMail" ? `, ${(trial.messagesPerSecond / goRate).toFixed(2)}× Go (target ≥ 1.00)` : "";
    console.log(
      `  ${trial.label.padEnd(32)} ${trial.messagesPerSecond.toFixed(0).padStart(5)} messages/s${ratio}; one send: median ` +
        `${format(contended.median)} ms, p90 ${format(contended.p90)} ms; CPU per send ${format(cpu)} ms (${availableParallelism()} cores cap ` +
        `${((availableParallelism() * 1000) / cpu).toFixed(0)}/s)`,
    );
  }

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
