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
 * The issue's targets for 1,000,000 lines: first receive and hook ≤ 0.5 s and ≤ 100 MB; sent ≤ 2 s and ≤ 150 MB;
 * doctor and search ≤ 2 s and ≤ 150 MB; cleanup ≤ 3 s and ≤ 150 MB; the hook after a cleanup as fast as before it.
 *
 * Then every command that lists mail, each with many results against few, on mailboxes of the same length (a
 * listing must cost one pass over its mail plus printing, not work per result: issue 32). In a store of its own:
 * bob's live mailbox, where one line in a hundred is from carol, unread, in thread Thread01 and holds "zebra" (the
 * many), and two unread messages, one with "needleword" (the few); erin's, as long, with only the two unread; frank's
 * archive, as long and marked as bob's, with two unread live messages. Each listing runs both ways, `--rounds` times
 * (3), many and few interleaved (and with `--against OLD`, that binary too, interleaved the same way): the median
 * wall time, the CPU time (user + system, what the load changes least) and the peak memory, and many against few.
 *
 *   search, --regex, --json  bob's: "zebra" against "needleword"; frank's archived mail the same
 *   inbox, --json            bob's unread (1% of the lines) against erin's (two)
 *   inbox --all, --archived  --from carol against --from dave (nobody): bob's live mail, frank's archive
 *   thread                   Thread01 (every marked line, bob's and frank's) against a message of its own
 *   sent, --json             carol's (every marked line) against dave's (none)
 *   watch --once             --limit as many as the marked lines against --limit 10; and --json
 *   web API                  /api/search, /api/sent, /api/thread of an `agentmail web` on the store: the same
 *                            many against few, each request timed on its own (the room is loaded once)
 *   MCP inbox                `agentmail mcp`, tools/call inbox: bob's against erin's
 *   Redis                    search, --regex, inbox, sent and thread, the same, on a private redis-server the store
 *                            was migrated to
 *
 * Run:  npm run bench (all of it)   or   node_modules/.bin/bun bench/sizes.ts [LINES...] [--listings] [--rounds N]
 *       [--against OLD-BINARY]   (--listings: only the listing commands)
 * Exits 1 if a command did not do what it should (every run's output is checked).
 */
import { appendFileSync, copyFileSync, mkdirSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { loadavg } from "node:os";
import { join } from "node:path";
import { findGo } from "./go.ts";
import { writeOldReadLines } from "../test/support/big-mailbox.ts";
import { chunksOf } from "../test/support/byte-stream.ts";
import { RedisServer } from "../test/support/redis-server.ts";
import { BINARY, tempRepo } from "../test/support/repo.ts";
import { TmuxServer } from "../test/support/tmux-server.ts";

const options = new Map<string, string>();
const sizes: number[] = [];
for (let i = 2; i < process.argv.length; i++) {
  const arg = process.argv[i]!;
  if (arg === "--listings") options.set(arg, "");
  else if (arg.startsWith("--")) options.set(arg, process.argv[++i] ?? "");
  else sizes.push(Number(arg));
}
const SIZES = sizes.length > 0 ? sizes : [1_000, 100_000, 1_000_000];
const LISTINGS_ONLY = options.has("--listings");
const ROUNDS = Number(options.get("--rounds") ?? 3);
const AGAINST = options.get("--against");
const GO = findGo();
const problems: string[] = [];

interface Measured {
  seconds: number;
  /** User and system time. */
  cpu: number;
  megabytes: number;
  code: number | null;
  stdout: string;
  stderr: string;
}

const unread = (id: string, body: string) =>
  JSON.stringify({ id, from: "alice", to: "bob", message: body, read_flag: false, created_at: "2026-01-01T00:00:00.000Z" }) + "\n";

function measure(argv: string[], env: Record<string, string>, cwd: string): Measured {
  const started = performance.now();
  const run = Bun.spawnSync(["/usr/bin/time", "-v", ...argv], { env, cwd, stdin: "ignore" });
  const seconds = (performance.now() - started) / 1000;
  return { ...measured(run.exitCode, run.stdout.toString(), run.stderr.toString()), seconds };
}

/** A run's outcome, with what /usr/bin/time -v wrote after its stderr (wall time to a hundredth of a second). */
function measured(code: number | null, stdout: string, stderr: string): Measured {
  const field = (pattern: RegExp) => pattern.exec(stderr)?.[1] ?? "0";
  const [minutes, seconds] = field(/Elapsed \(wall clock\) time \(h:mm:ss or m:ss\): (\S+)/).split(":");
  return {
    seconds: Number(minutes) * 60 + Number(seconds),
    cpu: Number(field(/User time \(seconds\): (\S+)/)) + Number(field(/System time \(seconds\): (\S+)/)),
    megabytes: Number(field(/Maximum resident set size \(kbytes\): (\d+)/)) / 1024,
    code,
    stdout,
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

/** One side of a listing: what runs, as whom, and the number of messages it must list. */
interface Side {
  args: string[];
  who: string;
  results: number;
  /** How the run is made and checked: the CLI's lines or JSON array, MCP, or the web API's messages. */
  via: "text" | "json" | "mcp" | "web" | "thread" | "watch";
}

interface Listing {
  command: string;
  many: Side;
  few: Side;
  /** A Redis case: run with the Redis store's environment. */
  redis?: boolean;
}

/** Every listing's measurements: per binary, per side, one per round. */
const listingRows: { lines: number; listing: Listing; runs: Map<string, { many: Measured[]; few: Measured[] }> }[] = [];

/** How many messages a run listed, as its output says (null: it failed, or the output is not a list). */
function listed(side: Side, run: Measured): number | null {
  if (run.code !== 0) return null;
  try {
    switch (side.via) {
      case "text":
        return run.stdout === "No messages\n" ? 0 : run.stdout.split("\n").length - 1;
      case "json":
      case "web":
        return (JSON.parse(run.stdout) as unknown[]).length;
      case "thread":
        return run.stdout.split("\nID: ").length - 1;
      case "watch":
        return (JSON.parse(run.stdout) as { feed: unknown[] }).feed.length;
      case "mcp": {
        const reply = JSON.parse(run.stdout) as { result: { content: { text: string }[] } };
        return (JSON.parse(reply.result.content[0]!.text) as unknown[]).length;
      }
    }
  } catch {
    return null;
  }
}

/** `agentmail mcp` under /usr/bin/time: initialize, one tools/call, then stdin closed once its reply came. */
async function measureMcp(
  binary: string,
  tool: string,
  args: Record<string, unknown>,
  env: Record<string, string>,
  cwd: string,
): Promise<Measured> {
  const started = performance.now();
  const child = Bun.spawn(["/usr/bin/time", "-v", binary, "mcp"], { env, cwd, stdin: "pipe", stdout: "pipe", stderr: "pipe" });
  const stderr = new Response(child.stderr).text();
  const request = (id: number, method: string, params: unknown) => `${JSON.stringify({ jsonrpc: "2.0", id, method, params })}\n`;
  child.stdin.write(
    request(1, "initialize", { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "bench", version: "0" } }),
  );
  child.stdin.write(`${JSON.stringify({ jsonrpc: "2.0", method: "notifications/initialized" })}\n`);
  child.stdin.write(request(2, "tools/call", { name: tool, arguments: args }));
  child.stdin.flush();
  let reply = "";
  let buffer = "";
  const decoder = new TextDecoder();
  for await (const chunk of chunksOf(child.stdout)) {
    buffer += decoder.decode(chunk, { stream: true });
    const complete = buffer.slice(0, buffer.lastIndexOf("\n") + 1).split("\n");
    reply = complete.find((line) => line !== "" && (JSON.parse(line) as { id?: number }).id === 2) ?? "";
    if (reply !== "") break;
  }
  child.stdin.end();
  const code = await child.exited;
  return { ...measured(code, reply, await stderr), seconds: (performance.now() - started) / 1000 };
}

/** An `agentmail web --read-only` on the store, and its API's requests, each timed on its own. */
class WebRoom {
  readonly #child: Bun.Subprocess<"ignore", "pipe", "pipe">;
  readonly #url: Promise<URL>;

  constructor(binary: string, env: Record<string, string>, cwd: string) {
    const child = Bun.spawn([binary, "web", "--read-only"], { env, cwd, stdin: "ignore", stdout: "pipe", stderr: "pipe" });
    this.#child = child;
    this.#url = (async () => {
      let text = "";
      for await (const chunk of chunksOf(child.stdout)) {
        text += new TextDecoder().decode(chunk);
        if (text.includes("\n")) return new URL(text.slice(0, text.indexOf("\n")));
      }
      throw new Error(`agentmail web exited: ${await new Response(child.stderr).text()}`);
    })();
  }

  /** One GET of the API (`/api/search?q=zebra`), as a Measured: wall time of the request; no CPU or memory of its own. */
  async get(path: string): Promise<Measured> {
    const base = await this.#url;
    const url = new URL(path, base);
    url.searchParams.set("token", base.searchParams.get("token")!);
    const started = performance.now();
    const response = await fetch(url);
    const text = await response.text();
    // The server's time: the bench's own parse of what came is not timed.
    const seconds = (performance.now() - started) / 1000;
    const messages = (JSON.parse(text) as { messages?: unknown[] }).messages ?? [];
    return { seconds, cpu: Number.NaN, megabytes: Number.NaN, code: response.ok ? 0 : 1, stdout: JSON.stringify(messages), stderr: "" };
  }

  stop(): void {
    this.#child.kill("SIGINT");
  }
}

const MARKED = { every: 100, word: "zebra", fields: { from: "carol", read_flag: false, thread_id: "Thread01" } };
const twoUnread = (who: string, prefix: string) =>
  unreadTo(who, `${prefix}Unrd01`, "the one unread") + unreadTo(who, `${prefix}Unrd02`, "the second, with needleword");
const unreadTo = (to: string, id: string, body: string) =>
  JSON.stringify({ id, from: "alice", to, message: body, read_flag: false, created_at: "2026-01-01T00:00:00.000Z" }) + "\n";

/** The listings, many against few, in the store the top of this file describes. */
async function listings(lines: number): Promise<void> {
  const marked = Math.ceil(lines / 100);
  const agents = ["alice", "bob", "carol", "dave", "erin", "frank"];
  const repo = tempRepo("agentmail-bench-listings-");
  const server = TmuxServer.start(agents, repo.dir);
  const redis = await RedisServer.start();
  const binaries = AGAINST ? [BINARY, AGAINST] : [BINARY];
  try {
    server.claimNames(BINARY, agents, repo.dir);
    writeOldReadLines(join(repo.mailDir, "bob.jsonl"), "bob", lines, MARKED);
    appendFileSync(join(repo.mailDir, "bob.jsonl"), twoUnread("bob", "B"));
    writeOldReadLines(join(repo.mailDir, "erin.jsonl"), "erin", lines);
    appendFileSync(join(repo.mailDir, "erin.jsonl"), twoUnread("erin", "E"));
    writeOldReadLines(join(repo.mailDir, ".archive", "frank.jsonl"), "frank", lines, MARKED, "Arc");
    appendFileSync(join(repo.mailDir, "frank.jsonl"), twoUnread("frank", "F"));
    const text = (args: string[], who: string, results: number): Side => ({
      args,
      who,
      results,
      via: args.includes("--json") ? "json" : "text",
    });
    const cases: Listing[] = [
      { command: "search", many: text(["search", "zebra"], "bob", marked), few: text(["search", "needleword"], "bob", 1) },
      {
        command: "search --regex",
        many: text(["search", "--regex", "zeb.a"], "bob", marked),
        few: text(["search", "--regex", "needle.ord"], "bob", 1),
      },
      {
        command: "search --json",
        many: text(["search", "zebra", "--json"], "bob", marked),
        few: text(["search", "needleword", "--json"], "bob", 1),
      },
      {
        command: "search, archived mail",
        many: text(["search", "zebra"], "frank", marked),
        few: text(["search", "needleword"], "frank", 1),
      },
      { command: "inbox", many: text(["inbox"], "bob", marked + 2), few: text(["inbox"], "erin", 2) },
      { command: "inbox --json", many: text(["inbox", "--json"], "bob", marked + 2), few: text(["inbox", "--json"], "erin", 2) },
      {
        command: "inbox --all --from",
        many: text(["inbox", "--all", "--from", "carol"], "bob", marked),
        few: text(["inbox", "--all", "--from", "dave"], "bob", 0),
      },
      {
        command: "inbox --archived --from",
        many: text(["inbox", "--archived", "--from", "carol"], "frank", marked),
        few: text(["inbox", "--archived", "--from", "dave"], "frank", 0),
      },
      {
        command: "thread",
        many: { args: ["thread", "Big00000"], who: "bob", results: 2 * marked, via: "thread" },
        few: { args: ["thread", "BUnrd01"], who: "bob", results: 1, via: "thread" },
      },
      { command: "sent", many: text(["sent"], "carol", 2 * marked), few: text(["sent"], "dave", 0) },
      { command: "sent --json", many: text(["sent", "--json"], "carol", 2 * marked), few: text(["sent", "--json"], "dave", 0) },
      {
        command: "watch --once --json",
        many: { args: ["watch", "--once", "--json", "--limit", String(marked)], who: "bob", results: marked, via: "watch" },
        few: { args: ["watch", "--once", "--json", "--limit", "10"], who: "bob", results: 10, via: "watch" },
      },
      {
        command: "MCP inbox",
        many: { args: ["inbox"], who: "bob", results: marked + 2, via: "mcp" },
        few: { args: ["inbox"], who: "erin", results: 2, via: "mcp" },
      },
    ];
    const web: Listing[] = [
      {
        command: "web /api/search",
        many: { args: ["/api/search?q=zebra"], who: "bob", results: Math.min(500, 2 * marked), via: "web" },
        few: { args: ["/api/search?q=needleword"], who: "bob", results: 3, via: "web" },
      },
      {
        command: "web /api/sent",
        many: { args: ["/api/sent?name=carol"], who: "bob", results: Math.min(500, 2 * marked), via: "web" },
        few: { args: ["/api/sent?name=dave"], who: "bob", results: 0, via: "web" },
      },
      {
        command: "web /api/thread",
        many: { args: ["/api/thread?id=Big00000"], who: "bob", results: 2 * marked, via: "web" },
        few: { args: ["/api/thread?id=BUnrd01"], who: "bob", results: 1, via: "web" },
      },
    ];
    // Redis: bob's and erin's mailboxes only (frank's archive would be a third of the copy's time).
    const onRedis: Listing[] = (
      [
        { command: "Redis: search", many: text(["search", "zebra"], "bob", marked), few: text(["search", "needleword"], "bob", 1) },
        {
          command: "Redis: search --regex",
          many: text(["search", "--regex", "zeb.a"], "bob", marked),
          few: text(["search", "--regex", "needle.ord"], "bob", 1),
        },
        { command: "Redis: inbox", many: text(["inbox"], "bob", marked + 2), few: text(["inbox"], "erin", 2) },
        { command: "Redis: sent", many: text(["sent"], "carol", marked), few: text(["sent"], "dave", 0) },
        {
          command: "Redis: thread",
          many: { args: ["thread", "Big00000"], who: "bob", results: marked, via: "thread" },
          few: { args: ["thread", "BUnrd01"], who: "bob", results: 1, via: "thread" },
        },
      ] satisfies Listing[]
    ).map((listing) => ({ ...listing, redis: true }));

    const redisEnv = { AGENTMAIL_URL: redis.url, AGENTMAIL_NAMESPACE: "bench-listings" };
    const runSide = async (binary: string, listing: Listing, side: Side, webRoom?: WebRoom): Promise<Measured> => {
      const env = { ...server.named(side.who), ...(listing.redis ? redisEnv : {}) };
      if (side.via === "web") return webRoom!.get(side.args[0]!);
      if (side.via === "mcp") return measureMcp(binary, "inbox", {}, env, repo.dir);
      return measure([binary, ...side.args], env, repo.dir);
    };
    const runAll = async (list: Listing[], webRooms?: Map<string, WebRoom>) => {
      for (const listing of list) {
        const row = { lines, listing, runs: new Map<string, { many: Measured[]; few: Measured[] }>() };
        listingRows.push(row);
        for (let round = 0; round < ROUNDS; round++) {
          for (const binary of binaries) {
            const runs = row.runs.get(binary) ?? row.runs.set(binary, { many: [], few: [] }).get(binary)!;
            // Many first in one round, few first in the next: neither always pays for a cold cache or index.
            for (const which of round % 2 === 0 ? (["many", "few"] as const) : (["few", "many"] as const)) {
              const side = listing[which];
              const run = await runSide(binary, listing, side, webRooms?.get(binary));
              const count = listed(side, run);
              if (count !== side.results)
                check(
                  `${listing.command} (${which}, ${binary === BINARY ? "this build" : "--against"}) at ${lines}: listed ${count} of ${side.results}`,
                  run,
                  false,
                );
              runs[which].push(run);
            }
          }
        }
      }
    };
    // Made before any is timed: each agent's sent index (search reads what it sent too), and the files in the cache.
    for (const agent of agents) measure([BINARY, "sent"], server.named(agent), repo.dir);
    await runAll(cases);
    const rooms = new Map(binaries.map((binary) => [binary, new WebRoom(binary, server.named("bob"), repo.dir)]));
    try {
      // The room sorts its copies on the first list asked for: done before any request is timed.
      for (const room of rooms.values()) await room.get("/api/room");
      await runAll(web, rooms);
    } finally {
      for (const room of rooms.values()) room.stop();
    }
    // The Redis store: bob's and erin's mail copied there (frank's archive left out: it would add a third to the copy).
    rmSync(join(repo.mailDir, ".archive"), { recursive: true, force: true });
    rmSync(join(repo.mailDir, "frank.jsonl"), { force: true });
    const copy = Bun.spawnSync([BINARY, "migrate", "--to", redis.url, "--keep-source", "--json"], {
      env: { ...server.named("alice"), AGENTMAIL_NAMESPACE: redisEnv.AGENTMAIL_NAMESPACE },
      cwd: repo.dir,
      stdin: "ignore",
    });
    if (copy.exitCode !== 0) problems.push(`migrate to Redis at ${lines}: ${copy.stderr.toString().slice(0, 300)}`);
    else await runAll(onRedis);
  } finally {
    server.stop();
    await redis.remove();
    repo.remove();
  }
}

for (const lines of SIZES) {
  if (!LISTINGS_ONLY) await bySize(lines);
  await listings(lines);
}

if (!LISTINGS_ONLY) {
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
}
const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;
const seconds = (value: number) => (Number.isNaN(value) ? "—" : value.toFixed(value < 10 ? 3 : 1));
for (const lines of SIZES) {
  const rows = listingRows.filter((row) => row.lines === lines);
  const binaries = AGAINST ? [BINARY, AGAINST] : [BINARY];
  const named = (binary: string) => (binary === BINARY ? "this build" : AGAINST!);
  console.log(
    `\n## Listings at ${lines.toLocaleString("en")} lines: many results against few — medians of ${ROUNDS}, interleaved; load average ${loadavg()[0]!.toFixed(2)}\n`,
  );
  console.log(
    `| listing | results: many / few | ${binaries.map((binary) => `${named(binary)}: many s / few s (CPU s) | ×, wall (CPU) | MB`).join(" | ")} |`,
  );
  console.log(`|---|---:|${binaries.map(() => "---:|---:|---:").join("|")}|`);
  for (const { listing, runs } of rows) {
    const cells = binaries.map((binary) => {
      const { many, few } = runs.get(binary)!;
      const wall = [median(many.map((run) => run.seconds)), median(few.map((run) => run.seconds))];
      const cpu = [median(many.map((run) => run.cpu)), median(few.map((run) => run.cpu))];
      const megabytes = Math.max(...[...many, ...few].map((run) => run.megabytes));
      const ratio = (pair: number[]) => (Number.isNaN(pair[0]!) ? "—" : (pair[0]! / pair[1]!).toFixed(2));
      const cpuText = Number.isNaN(cpu[0]!) ? "" : ` (${seconds(cpu[0]!)} / ${seconds(cpu[1]!)})`;
      return `${seconds(wall[0]!)} / ${seconds(wall[1]!)}${cpuText} | ${ratio(wall)} (${ratio(cpu)}) | ${Number.isNaN(megabytes) ? "—" : megabytes.toFixed(0)}`;
    });
    console.log(`| ${listing.command} | ${listing.many.results.toLocaleString("en")} / ${listing.few.results} | ${cells.join(" | ")} |`);
  }
}
if (problems.length > 0) {
  console.log(`\nCORRECTNESS FAILURES (${problems.length}):`);
  for (const problem of problems) console.log(`- ${problem}`);
  process.exitCode = 1;
} else console.log("\ncorrectness: every command gave the expected output at every length");
