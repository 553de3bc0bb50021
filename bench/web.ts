/**
 * The mail room's page on a real store, measured in a real browser (headless Debian chromium, playwright-core):
 *
 *   first render   a fresh page load of the room of a store with 20 agents and 10,000 messages: from the
 *                  browser's navigation start to the first view on the screen (agents and the feed), in the
 *                  browser's own clock (a performance mark the page sets), and the wall time around it
 *   arrival        an open page, and `agentmail send` run in an agent's pane environment: from just before the
 *                  send starts to the moment the new row is in the page (a MutationObserver in the page notes it),
 *                  both on this machine's clock
 *
 * Both on the file store and on a private redis-server. `--screenshots` also writes the pictures docs/mail-room.md
 * shows (docs/images/web-room.png, web-claims.png, web-thread.png, web-graph.png) from the file store's room, staged
 * for them with claims and the agents' panes running a program.
 *
 * Run:  npm run bench:web [-- --screenshots]     (needs chromium and redis-server: apt-get install -y chromium redis-server)
 * Exits 0 whatever the timings (a report, not a test); 1 if a check failed (a row that never came, a page that broke).
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { availableParallelism, loadavg } from "node:os";
import { join } from "node:path";
import { createMessage, serializeMessage, type Message } from "../src/mail/message.ts";
import { FileStore } from "../src/store/file/file-store.ts";
import { HOSTNAME } from "../src/store/durable/process-identity.ts";
import { ensureRoot } from "../src/store/paths.ts";
import { RedisStore } from "../src/store/redis/redis-store.ts";
import { parseServerUrl } from "../src/store/redis/url.ts";
import type { Store } from "../src/store/store.ts";
import { launchBrowser } from "../test/support/browser.ts";
import { BINARY, tempRepo } from "../test/support/repo.ts";
import { RedisServer } from "../test/support/redis-server.ts";
import { Running } from "../test/support/room-world.ts";
import { outsideTmuxEnv, TmuxServer } from "../test/support/tmux-server.ts";
import { summarize } from "./timing.ts";

const MESSAGES = 10_000;
const LOADS = 7;
const ARRIVALS = 20;
const HUMAN = "ana";
const SCREENSHOTS = process.argv.includes("--screenshots");
const IMAGES = join(import.meta.dir, "..", "docs", "images");

/** Twenty agents, each talking mostly with a few others, as a team does: the graph is a picture, not a hairball. */
const TEAM: Record<string, string[]> = {
  planner: ["architect", "backend", "frontend", "release"],
  architect: ["planner", "backend", "db", "security"],
  backend: ["reviewer", "tester", "db", "api"],
  frontend: ["reviewer", "design", "tester", "mobile"],
  reviewer: ["backend", "frontend", "api", "mobile"],
  tester: ["backend", "frontend", "ci", "triage"],
  db: ["backend", "data", "ops"],
  api: ["backend", "docs", "reviewer"],
  design: ["frontend", "mobile", "docs"],
  mobile: ["api", "design", "tester"],
  docs: ["api", "release", "planner"],
  release: ["ci", "ops", "planner", "docs"],
  ci: ["tester", "release", "infra"],
  infra: ["ci", "ops", "security"],
  ops: ["infra", "db", "release"],
  security: ["architect", "infra", "reviewer"],
  perf: ["backend", "db", "data"],
  data: ["db", "perf", "research"],
  research: ["data", "planner", "architect"],
  triage: ["tester", "planner", "backend"],
};
const AGENTS = Object.keys(TEAM);
const SUBJECTS = [
  "PR #%d is ready for review",
  "flaky test in %d runs",
  "migration %d applied",
  "benchmark regressed %d%",
  "question about issue #%d",
  "deploy %d done",
  "handoff: ticket #%d",
  "build %d failed on arm64",
  "schema change for table %d",
  "docs for endpoint v%d",
];
const TYPES = ["message", "message", "message", "task", "question", "status", "report", "handoff", "alert"];

/** A deterministic pseudo-random sequence, so every run seeds the same store. */
let seed = 42;
const random = () => (seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31) / 2 ** 31;
const pick = <T>(list: readonly T[]) => list[Math.floor(random() * list.length)]!;

/** 10,000 messages over the last week, threads among them; about two in three read. */
function seedMessages(now: number): Message[] {
  const messages: Message[] = [];
  const week = 7 * 86_400_000;
  for (let i = 0; i < MESSAGES; i++) {
    const from = pick(AGENTS);
    const to = pick(TEAM[from]!);
    const at = new Date(now - week + (week * i) / MESSAGES);
    const earlier = messages.length > 20 && random() < 0.3 ? messages[messages.length - 1 - Math.floor(random() * 20)]! : null;
    const thread = earlier && earlier.to === from ? earlier : null;
    const subject = thread
      ? `Re: ${String(thread.subject ?? "").replace(/^Re: /, "")}`
      : pick(SUBJECTS).replace("%d", String(100 + (i % 900)));
    const fields: Record<string, unknown> = { subject };
    const type = thread ? "response" : pick(TYPES);
    if (type !== "message") fields.type = type;
    if (random() < 0.05) fields.priority = "urgent";
    if (thread) Object.assign(fields, { thread_id: String(thread.thread_id ?? thread.id), in_reply_to: thread.id });
    const body = `${subject}.\n\nDetails: run ${i}, see the log at logs/${from}/${i}.txt; ${"more context. ".repeat(1 + (i % 5))}`;
    const message = createMessage(from, to, body, at, fields);
    if (i < MESSAGES - 300 && random() < 0.7)
      Object.assign(message, { read_flag: true, read_at: new Date(at.getTime() + 30_000).toISOString() });
    messages.push(message);
  }
  // The conversation the thread picture shows: the person and three agents, a few minutes ago.
  const ask = createMessage(HUMAN, "planner", "Where are we on the release? Anything blocking?", new Date(now - 300_000), {
    subject: "Release 2.4 status",
    type: "question",
  });
  const answer = createMessage(
    "planner",
    HUMAN,
    "Two blockers:\n- the arm64 build fails in CI (ci is on it)\n- migration 214 needs a review from db\nEverything else is merged.",
    new Date(now - 240_000),
    { subject: "Re: Release 2.4 status", type: "response", thread_id: ask.id, in_reply_to: ask.id },
  );
  const follow = createMessage(
    HUMAN,
    "planner",
    "Thanks. Ask db to review 214 first; ship without arm64 if CI is not green by 17:00.",
    new Date(now - 180_000),
    {
      subject: "Re: Release 2.4 status",
      type: "task",
      priority: "high",
      thread_id: ask.id,
      in_reply_to: answer.id,
    },
  );
  const done = createMessage("planner", HUMAN, "db approved 214; release is going out now.", new Date(now - 60_000), {
    subject: "Re: Release 2.4 status",
    type: "status",
    thread_id: ask.id,
    in_reply_to: follow.id,
  });
  Object.assign(ask, { read_flag: true, read_at: new Date(now - 290_000).toISOString() });
  Object.assign(answer, { read_flag: true, read_at: new Date(now - 200_000).toISOString() });
  Object.assign(follow, { read_flag: true, read_at: new Date(now - 170_000).toISOString() });
  messages.push(ask, answer, follow, done);
  return messages;
}

/** The file store written as JSONL mailboxes directly (as sends would have left them, without 10,000 fsyncs). */
function seedFileStore(root: string, messages: Message[]): void {
  const byMailbox = new Map<string, string[]>();
  for (const message of messages) {
    const lines = byMailbox.get(message.to) ?? [];
    lines.push(serializeMessage(message));
    byMailbox.set(message.to, lines);
  }
  ensureRoot(root);
  for (const [mailbox, lines] of byMailbox) writeFileSync(join(root, `${mailbox}.jsonl`), lines.join(""), { mode: 0o600 });
}

/** What the measuring code uses of the page's globals (the project's TypeScript has no DOM library). */
interface PageElement {
  textContent: string | null;
  querySelectorAll(selector: string): PageElement[];
}
interface PageGlobals {
  document: { querySelector(selector: string): PageElement };
  MutationObserver: new (
    callback: (records: unknown, observer: { disconnect(): void }) => void,
  ) => { observe(target: PageElement, options: { childList: boolean }): void };
  __arrived: number;
}

interface Result {
  engine: string;
  render: number[];
  renderWall: number[];
  arrival: number[];
}

const problems: string[] = [];

async function measure(engine: "file" | "redis"): Promise<Result> {
  const repo = tempRepo();
  const tmux = TmuxServer.start(AGENTS, repo.dir);
  const redis = engine === "redis" ? await RedisServer.start({ appendfsync: "no" }) : null;
  const storeEnv: Record<string, string> = redis ? { AGENTMAIL_URL: redis.url, AGENTMAIL_NAMESPACE: "bench-web" } : {};
  const store: Store = redis
    ? new RedisStore({ address: parseServerUrl(redis.url), namespace: "bench-web", host: HOSTNAME })
    : new FileStore(repo.mailDir);
  const browser = await launchBrowser({ width: 1400, height: 900 });
  let web: Running | null = null;
  try {
    const messages = seedMessages(Date.now());
    if (redis) for (const message of messages) await store.append(message);
    else seedFileStore(repo.mailDir, messages);
    for (const name of AGENTS)
      await store.writeStatus({ name, status: pick(["ready", "ready", "work", "offline"]), pane: tmux.agent(name).paneId });
    if (SCREENSHOTS && engine === "file") await stageRoom(tmux, storeEnv, repo.dir);
    // Thresholds as a team would set them for a week-long store: its seeded backlog is no emergency.
    const thresholds = { AGENTMAIL_STALLED_AFTER: "12h", AGENTMAIL_UNANSWERED_AFTER: "12h" };
    web = new Running(["web", "--port", "0", "--json"], outsideTmuxEnv({ ...storeEnv, ...thresholds, AGENTMAIL_HUMAN: HUMAN }), repo.dir);
    const { url } = JSON.parse(await web.line()) as { url: string };
    const page = await browser.context.newPage();
    page.on("pageerror", (error) => problems.push(`${engine}: page error ${error.message}`));
    const result: Result = { engine, render: [], renderWall: [], arrival: [] };
    for (let i = 0; i < LOADS; i++) {
      const start = performance.now();
      await page.goto(url);
      await page.waitForSelector("#feed tbody tr");
      result.renderWall.push(performance.now() - start);
      const rows = await page.locator("#feed tbody tr").count();
      if (rows < 200) problems.push(`${engine}: the feed shows ${rows} rows, not 200`);
      result.render.push(
        await page.evaluate(() => (performance.getEntriesByName("agentmail-first-render")[0] as { startTime: number }).startTime),
      );
    }
    // The pictures show the seeded room, before the arrivals below fill its feed.
    if (SCREENSHOTS && engine === "file") await screenshots(page, url);
    await page.goto(url);
    await page.waitForSelector("body[data-live='1']");
    const sender = { ...tmux.agent("backend").env, ...storeEnv };
    for (let i = 0; i < ARRIVALS; i++) {
      const text = `arrival ${i} ${Math.random().toString(36).slice(2)}`;
      // The page notes, on this machine's clock, when a row with the text is added.
      await page.evaluate((wanted) => {
        const browser = globalThis as unknown as PageGlobals;
        const body = browser.document.querySelector("#feed tbody");
        browser.__arrived = 0;
        new browser.MutationObserver((_, observer) => {
          for (const cell of body.querySelectorAll("td.preview")) {
            if (cell.textContent === wanted) {
              browser.__arrived = Date.now();
              observer.disconnect();
            }
          }
        }).observe(body, { childList: true });
      }, text);
      const sent = Date.now();
      const send = Bun.spawn([BINARY, "send", "reviewer", text], { env: sender, cwd: repo.dir, stdout: "pipe", stderr: "pipe" });
      if ((await send.exited) !== 0) problems.push(`${engine}: send failed: ${await new Response(send.stderr).text()}`);
      const arrived = await page
        .waitForFunction(() => (globalThis as unknown as PageGlobals).__arrived, undefined, { timeout: 10_000, polling: 20 })
        .then((handle) => handle.jsonValue() as Promise<number>)
        .catch(() => 0);
      if (!arrived) problems.push(`${engine}: message ${i} never appeared on the page`);
      else result.arrival.push(arrived - sent);
    }
    return result;
  } finally {
    await browser.close();
    if (web) await web.stop();
    store.close();
    tmux.stop();
    await redis?.remove();
    repo.remove();
  }
}

/**
 * For the pictures only: the agents' panes run a program (`sleep`, where an agent CLI would be), but triage's, left
 * at its shell, and claims are taken, one by an agent that then goes offline, another waited for.
 */
async function stageRoom(tmux: TmuxServer, storeEnv: Record<string, string>, cwd: string): Promise<void> {
  for (const name of AGENTS) if (name !== "triage") tmux.run(["send-keys", "-t", tmux.agent(name).paneId, "-l", "sleep 1d\n"]);
  const run = async (agent: string, args: string[]) => {
    const child = Bun.spawn([BINARY, ...args], { env: { ...tmux.agent(agent).env, ...storeEnv }, cwd, stdout: "ignore", stderr: "pipe" });
    if ((await child.exited) !== 0 && args[0] !== "claim")
      problems.push(`staging: ${args.join(" ")}: ${await new Response(child.stderr).text()}`);
  };
  await run("backend", ["claim", "src/api/**", "--reason", "pagination rewrite"]);
  // db was at work when it claimed, and its session ended after: its claim no longer counts.
  await run("db", ["status", "work"]);
  await run("db", ["claim", "migrations/214_*.sql", "--reason", "migration 214"]);
  await run("docs", ["claim", "docs/api/**", "--shared", "--reason", "endpoint docs"]);
  await run("api", ["claim", "src/api/routes.ts"]);
  await run("db", ["status", "offline"]);
}

async function screenshots(page: import("playwright-core").Page, url: string): Promise<void> {
  mkdirSync(IMAGES, { recursive: true });
  await page.goto(url);
  await page.waitForSelector("#feed tbody tr");
  await page.screenshot({ path: join(IMAGES, "web-room.png") });
  await page.goto(`${url}#/claims`);
  await page.waitForSelector("#claims tr[data-claim]");
  await page.screenshot({ path: join(IMAGES, "web-claims.png") });
  await page.goto(`${url}#/`);
  const id = await page.locator('#feed tbody tr[data-mailbox="ana"]', { hasText: "Release 2.4" }).first().getAttribute("data-id");
  await page.goto(`${url}#/thread/${id}`);
  await page.waitForSelector("#thread article");
  await page.screenshot({ path: join(IMAGES, "web-thread.png"), fullPage: true });
  await page.goto(`${url}#/graph/7d`);
  await page.waitForSelector("#graph");
  await page.screenshot({ path: join(IMAGES, "web-graph.png"), fullPage: true });
  console.log(`screenshots written to ${IMAGES}`);
}

const format = (ms: number) => ms.toFixed(0);
console.log(`# the mail room's page: ${AGENTS.length} agents, ${MESSAGES.toLocaleString("en")} messages`);
console.log(
  `machine: ${availableParallelism()} cores, load ${loadavg()
    .map((value) => value.toFixed(2))
    .join(" ")}; chromium headless\n`,
);
console.log(
  "| store | first render, in the browser: median / p90 / max ms | page load to rows, wall: median ms | arrival, send to row: median / p90 / max ms |",
);
console.log("|---|---:|---:|---:|");
for (const engine of ["file", "redis"] as const) {
  const result = await measure(engine);
  if (result.arrival.length === 0 || result.render.length === 0) {
    console.error(problems.join("\n"));
    process.exit(1);
  }
  const render = summarize(result.render);
  const wall = summarize(result.renderWall);
  const arrival = summarize(result.arrival);
  console.log(
    `| ${engine} (${render.runs} loads, ${arrival.runs} sends) | ${format(render.median)} / ${format(render.p90)} / ${format(Math.max(...result.render))} | ${format(wall.median)} | ${format(arrival.median)} / ${format(arrival.p90)} / ${format(Math.max(...result.arrival))} |`,
  );
}
if (problems.length > 0) {
  console.error(problems.join("\n"));
  process.exitCode = 1;
}
