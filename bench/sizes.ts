/**
 * How agentmail grows with a mailbox's length: bob's mailbox holds 1,000, 100,000 and 1,000,000 old read lines of
 * 185 bytes (written directly, as test/support/big-mailbox.ts writes them: 185 KB, 18.5 MB, 185 MB) from alice, then
 * two unread messages. Each command runs once per size (in a fresh copy of that state where it changes it), timed
 * by /usr/bin/time -v: wall time and peak resident memory. Named agents (AGENTMAIL_NAME, claimed): no tmux call.
 *
 *   receive, no cursor       the first receive of the mailbox (its cursor is made by a streaming scan)
 *   receive --hook           the same, as a hook; then with the cursor in place
 *   sent                     bob's (he sent none of the lines: every line names him, as `to`) and alice's (all)
 *   search                   a word in one message, as plain text and as a regular expression
 *   doctor, inbox            the whole store, and bob's unread mail
 *   cleanup                  --read-hours 0: every read line to the archive; and, with half the history recent,
 *                            the default cleanup (which keeps that half), then bob's hooks after it
 *   Go AgentMail receive     the same lines in its own mailbox (.agentmail/mailboxes/), when the binary is there
 *
 * The targets for 1,000,000 lines: first receive and hook ≤ 0.5 s and ≤ 100 MB; sent ≤ 2 s and ≤ 150 MB;
 * doctor and search ≤ 2 s and ≤ 150 MB; cleanup ≤ 3 s and ≤ 150 MB; the hook after a cleanup as fast as before it.
 *
 * Run:  npm run bench (all of it)   or   node_modules/.bin/bun bench/sizes.ts [LINES...]
 * Exits 1 if a command did not do what it should (every run's output is checked).
 */
import { appendFileSync, copyFileSync, mkdirSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { loadavg } from "node:os";
import { join } from "node:path";
import { findGo } from "./go.ts";
import { writeOldReadLines } from "../test/support/big-mailbox.ts";
import { BINARY, tempRepo } from "../test/support/repo.ts";
import { TmuxServer } from "../test/support/tmux-server.ts";

const SIZES = process.argv.length > 2 ? process.argv.slice(2).map(Number) : [1_000, 100_000, 1_000_000];
const GO = findGo();
const problems: string[] = [];

interface Measured {
  seconds: number;
  megabytes: number;
  code: number | null;
  stdout: string;
  stderr: string;
}

const unread = (id: string, body: string) =>
  JSON.stringify({ id, from: "alice", to: "bob", message: body, read_flag: false, created_at: "2026-01-01T00:00:00.000Z" }) + "\n";

function measure(argv: string[], env: Record<string, string>, cwd: string): Measured {
  const run = Bun.spawnSync(["/usr/bin/time", "-v", ...argv], { env, cwd, stdin: "ignore" });
  const stderr = run.stderr.toString();
  const field = (pattern: RegExp) => pattern.exec(stderr)?.[1] ?? "0";
  const [minutes, seconds] = field(/Elapsed \(wall clock\) time \(h:mm:ss or m:ss\): (\S+)/).split(":");
  return {
    seconds: Number(minutes) * 60 + Number(seconds),
    megabytes: Number(field(/Maximum resident set size \(kbytes\): (\d+)/)) / 1024,
    code: run.exitCode,
    stdout: run.stdout.toString(),
    stderr: stderr.slice(0, stderr.indexOf("\tCommand being timed")),
  };
}

function check(what: string, run: Measured, ok: boolean): void {
  if (!ok)
    problems.push(
      `${what}: exit ${run.code}, stdout ${JSON.stringify(run.stdout.slice(0, 160))}, stderr ${JSON.stringify(run.stderr.slice(0, 160))}`,
    );
}

const rows: { command: string; cells: Map<number, Measured> }[] = [];
function record(command: string, lines: number, run: Measured): void {
  let row = rows.find((each) => each.command === command);
  if (!row) rows.push((row = { command, cells: new Map() }));
  row.cells.set(lines, run);
}

async function bySize(lines: number): Promise<void> {
  const repo = tempRepo("agentmail-bench-sizes-");
  const server = TmuxServer.start(["alice", "bob"], repo.dir);
  try {
    server.claimNames(BINARY, ["alice", "bob"], repo.dir);
    const as = (name: string) => server.named(name);
    const box = join(repo.mailDir, "bob.jsonl");
    const pristine = join(repo.dir, "pristine.jsonl");
    const recent = join(repo.dir, "recent.jsonl");
    writeOldReadLines(pristine, "bob", lines);
    appendFileSync(pristine, unread("Unread01", "the one unread") + unread("Unread02", "the second, with needleword"));
    const reset = () => {
      for (const file of readdirSync(repo.mailDir)) if (file.startsWith("bob.jsonl")) rmSync(join(repo.mailDir, file), { force: true });
      rmSync(join(repo.mailDir, ".archive"), { recursive: true, force: true });
      rmSync(join(repo.mailDir, ".sent"), { recursive: true, force: true });
      copyFileSync(pristine, box);
    };
    const am = (command: string, args: string[], who: string, ok: (run: Measured) => boolean) => {
      const run = measure([BINARY, ...args], as(who), repo.dir);
      check(`${command} at ${lines}`, run, ok(run));
      record(command, lines, run);
    };
    const delivered =
      (id: string, code = 0, stream: "stdout" | "stderr" = "stdout") =>
      (run: Measured) =>
        run.code === code && run[stream].includes(`ID: ${id}\n`);

    reset();
    am("receive --hook, no cursor yet", ["receive", "--hook"], "bob", delivered("Unread01", 2, "stderr"));
    reset();
    am("receive, no cursor yet", ["receive"], "bob", delivered("Unread01"));
    am("receive --hook, cursor in place", ["receive", "--hook"], "bob", delivered("Unread02", 2, "stderr"));
    am("receive --hook, cursor, no mail", ["receive", "--hook"], "bob", (run) => run.code === 0 && run.stderr === "");
    am("sent (bob: none of the lines)", ["sent"], "bob", (run) => run.code === 0 && run.stdout === "No messages\n");
    am("sent (alice: all of them)", ["sent"], "alice", (run) => run.code === 0 && run.stdout.split("\n").length > lines);
    am("search needleword", ["search", "needleword"], "bob", (run) => run.code === 0 && run.stdout.startsWith("Unread02 "));
    am(
      "search --regex needle.ord",
      ["search", "--regex", "needle.ord"],
      "bob",
      (run) => run.code === 0 && run.stdout.startsWith("Unread02 "),
    );
    am("doctor", ["doctor"], "bob", (run) => run.stdout.includes("store:"));
    am("inbox", ["inbox"], "bob", (run) => run.code === 0);
    am(
      "cleanup --read-hours 0 (every line)",
      ["cleanup", "--read-hours", "0"],
      "alice",
      (run) => run.code === 0 && run.stdout.includes("archived"),
    );
    // Half the history recent: the default cleanup (read over 2 hours ago) keeps it, and the hook goes on after it.
    reset();
    rmSync(box);
    writeOldReadLines(box, "bob", Math.ceil(lines / 2));
    writeOldReadLines(recent, "bob", Math.floor(lines / 2));
    const now = new Date().toISOString();
    appendFileSync(box, readFileSync(recent, "utf8").replaceAll("2020-01-01T00:00:00.000Z", now).replaceAll('"Big', '"New'));
    appendFileSync(box, unread("Unread01", "the one unread") + unread("Unread02", "the second, with needleword"));
    rmSync(recent);
    am("receive, half the history recent, no cursor", ["receive"], "bob", delivered("Unread01"));
    am("cleanup (half the lines kept)", ["cleanup"], "alice", (run) => run.code === 0 && run.stdout.includes("archived"));
    am("receive --hook after that cleanup", ["receive", "--hook"], "bob", delivered("Unread02", 2, "stderr"));
    // Sent after that hook: a hook shows every fresh message it can, so one sent before it would be shown by it.
    appendFileSync(box, unread("Unread03", "after the cleanup"));
    am("receive --hook after that, again", ["receive", "--hook"], "bob", delivered("Unread03", 2, "stderr"));
    if (GO) {
      const goBox = join(repo.dir, ".agentmail", "mailboxes", "bob.jsonl");
      mkdirSync(join(repo.dir, ".agentmail", "mailboxes"), { recursive: true });
      copyFileSync(pristine, goBox);
      const run = measure([GO, "receive"], server.agent("bob").env, repo.dir);
      check(`Go receive at ${lines}`, run, run.code === 0 && run.stdout.includes("ID: Unread01"));
      record("Go AgentMail: receive", lines, run);
    }
  } finally {
    server.stop();
    repo.remove();
  }
}

for (const lines of SIZES) await bySize(lines);

const header = SIZES.map((lines) => `${lines.toLocaleString("en")} lines: s / MB`);
console.log(`\n## agentmail by mailbox length — one run each; load average ${loadavg()[0]!.toFixed(2)}\n`);
console.log(`| command | ${header.join(" | ")} |`);
console.log(`|---|${SIZES.map(() => "---:").join("|")}|`);
for (const { command, cells } of rows) {
  const values = SIZES.map((lines) => {
    const cell = cells.get(lines);
    return cell ? `${cell.seconds.toFixed(2)} / ${cell.megabytes.toFixed(0)}` : "—";
  });
  console.log(`| ${command} | ${values.join(" | ")} |`);
}
if (problems.length > 0) {
  console.log(`\nCORRECTNESS FAILURES (${problems.length}):`);
  for (const problem of problems) console.log(`- ${problem}`);
  process.exitCode = 1;
} else console.log("\ncorrectness: every command gave the expected output at every length");
