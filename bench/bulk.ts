/**
 * The bulk jobs, against the compiled binary, each checked for exactly what it should have done:
 *
 *   migrate        30,000 messages in 10 mailboxes (a third unread), file store → a private redis-server (AOF
 *                  always) and back into another repository: messages/s both ways (target ≥ 5,000)
 *   bridge sync    10,000 FEAT-124 files waiting for four agents: one `bridge sync` (target ≤ 10 s)
 *   MCP sends      one `agentmail mcp` server, 1,000 `send` calls one at a time and 16 in flight, with a claimed
 *                  AGENTMAIL_NAME and without (a tmux lookup per call): sends/s (target ≥ 1,000)
 *
 * Run:  npm run bench (all of it)   or   node_modules/.bin/bun bench/bulk.ts   (BENCH_ONLY=mcp: that job alone)
 * Exits 1 if a check failed.
 */
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { loadavg } from "node:os";
import { join } from "node:path";
import { chunksOf } from "../test/support/byte-stream.ts";
import { RedisServer } from "../test/support/redis-server.ts";
import { BINARY, tempRepo } from "../test/support/repo.ts";
import { TmuxServer } from "../test/support/tmux-server.ts";

const MIGRATE_MESSAGES = 30_000;
const MIGRATE_MAILBOXES = 10;
const BRIDGE_FILES = 10_000;
const MCP_SENDS = 1_000;
const problems: string[] = [];
const lines: string[] = [];

const cleanEnv = (): Record<string, string> => {
  const env: Record<string, string> = {};
  for (const [key, value] of Object.entries(process.env)) {
    if (value !== undefined && !key.startsWith("TMUX") && !key.startsWith("AGENTMAIL_")) env[key] = value;
  }
  return env;
};

function idsIn(dir: string): string[] {
  const ids: string[] = [];
  for (const file of readdirSync(dir).filter((name) => name.endsWith(".jsonl"))) {
    for (const line of readFileSync(join(dir, file), "utf8").split("\n").filter(Boolean)) ids.push((JSON.parse(line) as { id: string }).id);
  }
  return ids.sort();
}

async function migrate(): Promise<void> {
  const redis = await RedisServer.start();
  const from = tempRepo("agentmail-bench-migrate-");
  const back = tempRepo("agentmail-bench-migrate-back-");
  try {
    mkdirSync(from.mailDir, { recursive: true });
    for (let box = 0; box < MIGRATE_MAILBOXES; box++) {
      const text: string[] = [];
      for (let n = 0; n < MIGRATE_MESSAGES / MIGRATE_MAILBOXES; n++) {
        const createdAt = new Date(Date.UTC(2026, 0, 1) + n * 1000).toISOString();
        const record = { id: `M${box}${n.toString(36).padStart(6, "0")}`, from: "alice", to: `agent${box}`, read_flag: n % 3 !== 0 };
        text.push(
          JSON.stringify({ ...record, message: `Message ${n}: the build on main is green, review PR ${n}.`, created_at: createdAt }),
        );
      }
      writeFileSync(join(from.mailDir, `agent${box}.jsonl`), text.join("\n") + "\n");
    }
    const sourceIds = idsIn(from.mailDir);
    const env = { ...cleanEnv(), AGENTMAIL_NAMESPACE: "bench-migrate" };
    for (const [label, args, cwd] of [
      ["file store → Redis", ["migrate", "--to", redis.url, "--json"], from.dir],
      ["Redis → file store", ["migrate", "--from", redis.url, "--json"], back.dir],
    ] as const) {
      const started = performance.now();
      const run = Bun.spawnSync([BINARY, ...args], { env, cwd, stdin: "ignore" });
      const seconds = (performance.now() - started) / 1000;
      const report = run.exitCode === 0 ? (JSON.parse(run.stdout.toString()) as { messages: number }) : null;
      if (report?.messages !== MIGRATE_MESSAGES)
        problems.push(`migrate ${label}: ${run.stdout.toString().slice(0, 200)} ${run.stderr.toString().slice(0, 200)}`);
      const rate = MIGRATE_MESSAGES / seconds;
      lines.push(
        `migrate ${label}: ${MIGRATE_MESSAGES.toLocaleString("en")} messages in ${seconds.toFixed(2)} s, ${rate.toFixed(0)} messages/s (target ≥ 5,000: ${rate >= 5000 ? "PASS" : "FAIL"})`,
      );
    }
    const backIds = idsIn(back.mailDir);
    if (JSON.stringify(backIds) !== JSON.stringify(sourceIds))
      problems.push("migrate: the messages that came back are not those that left, each once");
  } finally {
    await redis.remove();
    from.remove();
    back.remove();
  }
}

async function bridgeSync(): Promise<void> {
  const agents = ["alice", "bob", "carol", "dave"];
  const repo = tempRepo("agentmail-bench-bridge-");
  const server = TmuxServer.start(agents, repo.dir);
  try {
    const run = (args: string[]) => Bun.spawnSync([BINARY, ...args], { env: server.agent("alice").env, cwd: repo.dir, stdin: "ignore" });
    for (const agent of agents) Bun.spawnSync([BINARY, "status", "ready"], { env: server.agent(agent).env, cwd: repo.dir });
    if (run(["bridge", "add", "feat124"]).exitCode !== 0) problems.push("bridge add feat124 failed");
    for (const agent of agents) mkdirSync(join(repo.dir, ".mail", agent), { recursive: true });
    for (let n = 0; n < BRIDGE_FILES; n++) {
      const agent = agents[n % agents.length]!;
      const front = `from: worker-${n % 7}\nto: ${agent}\ntype: status\ntimestamp: 2026-01-01T00:00:00Z\ntags: [BUG-${n}, fugue]`;
      writeFileSync(
        join(repo.dir, ".mail", agent, `2026-01-01T00-00-00_w_${String(n).padStart(5, "0")}.md`),
        `---\n${front}\n---\n\n## Status ${n}\n\nGreen.\n`,
      );
    }
    await Bun.sleep(300);
    const started = performance.now();
    const sync = run(["bridge", "sync", "--json"]);
    const seconds = (performance.now() - started) / 1000;
    const imported =
      sync.exitCode === 0 ? (JSON.parse(sync.stdout.toString()) as { bridges: { imported: number }[] }).bridges[0]?.imported : -1;
    const stored = idsIn(repo.mailDir);
    if (imported !== BRIDGE_FILES || stored.length !== BRIDGE_FILES || new Set(stored).size !== BRIDGE_FILES) {
      problems.push(`bridge sync: imported ${imported}, ${stored.length} lines stored, expected ${BRIDGE_FILES} each once`);
    }
    lines.push(
      `bridge sync, ${BRIDGE_FILES.toLocaleString("en")} FEAT-124 files: ${seconds.toFixed(2)} s, ${((seconds * 1000) / BRIDGE_FILES).toFixed(2)} ms a file (target ≤ 10 s: ${seconds <= 10 ? "PASS" : "FAIL"})`,
    );
  } finally {
    server.stop();
    repo.remove();
  }
}

/** A client of one `agentmail mcp` server: JSON-RPC over its stdin and stdout, replies matched by id. */
async function mcpSends(named: boolean, inFlight: number): Promise<void> {
  const repo = tempRepo("agentmail-bench-mcp-");
  const server = TmuxServer.start(["alice", "bob"], repo.dir);
  try {
    if (named) server.claimNames(BINARY, ["alice", "bob"], repo.dir);
    const env = named ? server.named("bob") : server.agent("bob").env;
    const child = Bun.spawn([BINARY, "mcp"], { env, cwd: repo.dir, stdin: "pipe", stdout: "pipe", stderr: "ignore" });
    type Reply = { id?: number; result?: { isError?: boolean } };
    const waiting = new Map<number, (reply: Reply) => void>();
    void (async () => {
      let buffer = "";
      const decoder = new TextDecoder();
      for await (const chunk of chunksOf(child.stdout)) {
        buffer += decoder.decode(chunk);
        for (let newline = buffer.indexOf("\n"); newline !== -1; newline = buffer.indexOf("\n")) {
          const reply = JSON.parse(buffer.slice(0, newline)) as Reply;
          buffer = buffer.slice(newline + 1);
          if (reply.id === undefined) continue;
          waiting.get(reply.id)?.(reply);
          waiting.delete(reply.id);
        }
      }
    })();
    let nextId = 1;
    const call = (method: string, params: unknown) =>
      new Promise<Reply>((resolve) => {
        const id = nextId++;
        waiting.set(id, resolve);
        child.stdin.write(JSON.stringify({ jsonrpc: "2.0", id, method, params }) + "\n");
        child.stdin.flush();
      });
    await call("initialize", { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "bench", version: "0" } });
    child.stdin.write(JSON.stringify({ jsonrpc: "2.0", method: "notifications/initialized" }) + "\n");
    const send = (n: number) => call("tools/call", { name: "send", arguments: { recipient: "alice", message: `bulk ${n}` } });
    for (let n = 0; n < 10; n++) await send(n);
    let started = 0;
    let failed = 0;
    const begin = performance.now();
    await Promise.all(
      Array.from({ length: inFlight }, async () => {
        while (started < MCP_SENDS) {
          const reply = await send(started++);
          if (!reply.result || reply.result.isError) failed++;
        }
      }),
    );
    const rate = MCP_SENDS / ((performance.now() - begin) / 1000);
    child.stdin.end();
    await child.exited;
    const stored = idsIn(repo.mailDir).length;
    if (failed > 0 || stored !== MCP_SENDS + 10) problems.push(`mcp sends: ${failed} failed, ${stored} stored for ${MCP_SENDS + 10}`);
    const who = named ? "claimed AGENTMAIL_NAME" : "tmux lookup per call";
    lines.push(
      `MCP server, ${MCP_SENDS.toLocaleString("en")} sends, ${inFlight} in flight, ${who}: ${rate.toFixed(0)} sends/s (target ≥ 1,000: ${rate >= 1000 ? "PASS" : "FAIL"})`,
    );
  } finally {
    server.stop();
    repo.remove();
  }
}

// BENCH_ONLY=migrate|bridge|mcp runs one job (comma-separated for several).
const only = process.env.BENCH_ONLY?.split(",");
const runs = (job: string) => !only || only.includes(job);
if (runs("migrate")) await migrate();
if (runs("bridge")) await bridgeSync();
if (runs("mcp")) for (const named of [true, false]) for (const inFlight of [1, 16]) await mcpSends(named, inFlight);
console.log(`\n## agentmail bulk jobs — load average ${loadavg()[0]!.toFixed(2)}\n`);
for (const line of lines) console.log(line);
if (problems.length > 0) {
  console.log(`\nCORRECTNESS FAILURES (${problems.length}):`);
  for (const problem of problems) console.log(`- ${problem}`);
  process.exitCode = 1;
} else console.log("\ncorrectness: every message migrated both ways once, every file imported once, every MCP send stored once");
