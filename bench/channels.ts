/**
 * How fast, and how much, mail reaches a real agent CLI's model through its own channel: each CLI interactive in a
 * private tmux server against the mock model (test/agents/launch.ts), agentmail's hooks installed, the mailman
 * running, every time taken from the mock's request log.
 *
 *   latency   median of RUNS (10) from `agentmail send` starting to the model's request carrying the mail:
 *             idle (Claude Code, Codex CLI), delivered by `send` itself along the route the mailman verified, and by
 *             the mailman alone (the route forgotten first); busy (all three), mail sent while a `sleep 3` runs: from
 *             the sleep's end to the request, and from the send to it
 *   burst     50 messages sent to a busy Claude Code while its tool runs: the model requests that followed, agentmail's
 *             characters that reached the model (its own text in each distinct text block carrying mail, once; the
 *             blocks themselves also hold what Claude Code puts around and after it), and the characters of all
 *             those requests (the context each one re-sends); "before" is the build of --before (a git revision,
 *             main by default) with its own hooks and no mailman, "after" this build (alone with --after-only)
 *
 * Run:  npm run bench:channels [-- latency|burst] [--before=<rev>] [--after-only]   (BENCH_RUNS=10; BENCH_DETAIL=1
 *       prints the start of each text block that carried mail)
 */
import { execFileSync } from "node:child_process";
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync } from "node:fs";
import { loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import type { Recorded } from "../test/support/mock-model/server.ts";
import { loadedIn } from "../test/agents/codex-raw-control.ts";
import { AGENT, carries, Interactive, SENDER, until } from "../test/agents/interactive.ts";
import { claudeSession, launchClaude, launchCodex, launchGemini, routeByContent, setUpClaude, setUpCodex } from "../test/agents/launch.ts";

const RUNS = Number(process.env.BENCH_RUNS ?? 10);
const PACE_MS = 2_500;
const args = process.argv.slice(2);
const wanted = (part: string) => !args.some((arg) => !arg.startsWith("--")) || args.includes(part);
const beforeRev = args.find((arg) => arg.startsWith("--before="))?.slice("--before=".length) ?? "main";

const median = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
};
const show = (values: number[]) =>
  `median ${Math.round(median(values))} ms (min ${Math.min(...values)}, max ${Math.max(...values)}, n=${values.length})`;

/** The pid of a running `sleep <seconds>`, or undefined. */
function sleepPid(seconds: number): number | undefined {
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      if (readFileSync(`/proc/${entry}/cmdline`, "utf8").split("\0").join(" ").trim().endsWith(`sleep ${seconds}`)) return Number(entry);
    } catch {
      // Gone.
    }
  }
  return undefined;
}

const requestCarrying = (lab: Interactive, marker: string, after: number): Recorded | undefined =>
  lab.world.mock.conversation.find((request) => request.at >= after && carries(request.body, marker));

/** Sends and returns when `agentmail send` started. */
async function timedSend(lab: Interactive, to: string, body: string): Promise<number> {
  const started = Date.now();
  await lab.world.send(SENDER, to, body);
  return started;
}

/** Waits until the agent is between turns (its own measure) and the pace of the last frame has passed. */
async function settle(idle: () => boolean | Promise<boolean>): Promise<void> {
  await until("the agent idle", idle, 60_000);
  await Bun.sleep(PACE_MS);
}

async function idleRuns(lab: Interactive, idle: () => boolean | Promise<boolean>, viaMailman: boolean, tag: string): Promise<number[]> {
  const latencies: number[] = [];
  for (let run = 0; run < RUNS; run++) {
    await settle(idle);
    if (viaMailman) rmSync(join(lab.world.repo.mailDir, ".mailman", "routes.json"), { force: true });
    const marker = `${tag}-${run}-${crypto.randomUUID().slice(0, 6)}`;
    const sent = await timedSend(lab, AGENT, `Mail (${marker}).`);
    const request = await until(
      `the request carrying ${marker}`,
      () => requestCarrying(lab, marker, sent),
      60_000,
      () => lab.mailmanLog(),
    );
    latencies.push(request.at - sent);
  }
  return latencies;
}

/** Mail sent while a `sleep 3` runs; `start` starts the turn that runs it. */
async function busyRuns(lab: Interactive, idle: () => boolean | Promise<boolean>, start: (tag: string) => Promise<void>, tag: string) {
  const afterTool: number[] = [];
  const afterSend: number[] = [];
  for (let run = 0; run < RUNS; run++) {
    await settle(idle);
    await start(`RUN-SLEEP-3 ${tag}-${run}`);
    const pid = await until(
      "the sleep running",
      () => sleepPid(3),
      60_000,
      () => lab.mailmanLog(),
    );
    const marker = `${tag}-mail-${run}-${crypto.randomUUID().slice(0, 6)}`;
    const sent = await timedSend(lab, AGENT, `Mail (${marker}).`);
    await until("the sleep over", () => !existsSync(`/proc/${pid}`), 30_000);
    const ended = Date.now();
    const request = await until(
      `the request carrying ${marker}`,
      () => requestCarrying(lab, marker, sent),
      60_000,
      () => lab.mailmanLog(),
    );
    afterTool.push(Math.max(0, request.at - ended));
    afterSend.push(request.at - sent);
  }
  return { afterTool, afterSend };
}

async function claudeLatency(): Promise<void> {
  const lab = new Interactive();
  try {
    lab.world.mock.otherwise(routeByContent);
    await setUpClaude(lab);
    await launchClaude(lab, AGENT);
    await lab.startMailman();
    const idle = () => claudeSession(lab, AGENT)?.status === "idle";
    // The first frame makes the mailman verify the route that `send` then uses.
    await idleRuns(lab, idle, false, "warm");
    await Bun.sleep(7_000);
    console.log(`Claude Code idle, by send:     ${show(await idleRuns(lab, idle, false, "cc-idle"))}`);
    console.log(`Claude Code idle, by mailman:  ${show(await idleRuns(lab, idle, true, "cc-idle-mm"))}`);
    const busy = await busyRuns(lab, idle, (text) => lab.world.send(SENDER, AGENT, text).then(() => {}), "cc-busy");
    console.log(`Claude Code busy, tool end -> request: ${show(busy.afterTool)}; send -> request: ${show(busy.afterSend)}`);
  } finally {
    await lab.stop();
  }
}

async function codexLatency(): Promise<void> {
  const lab = new Interactive();
  try {
    lab.world.mock.otherwise(routeByContent);
    const home = await setUpCodex(lab, [lab.world.repo.dir]);
    await launchCodex(lab, AGENT, lab.world.repo.dir, () => loadedIn(home, lab.world.repo.dir));
    await lab.startMailman();
    const idle = () => loadedIn(home, lab.world.repo.dir);
    await idleRuns(lab, idle, false, "warm");
    console.log(`Codex CLI idle, by send:       ${show(await idleRuns(lab, idle, false, "cx-idle"))}`);
    console.log(`Codex CLI idle, by mailman:    ${show(await idleRuns(lab, idle, true, "cx-idle-mm"))}`);
    const busy = await busyRuns(lab, idle, (text) => lab.world.send(SENDER, AGENT, text).then(() => {}), "cx-busy");
    console.log(`Codex CLI busy, tool end -> request: ${show(busy.afterTool)}; send -> request: ${show(busy.afterSend)}`);
  } finally {
    await lab.stop();
  }
}

async function geminiLatency(): Promise<void> {
  const lab = new Interactive();
  try {
    lab.world.mock.otherwise(routeByContent);
    await launchGemini(lab, AGENT);
    await lab.startMailman();
    const idle = () => lab.screen(AGENT).includes("Type your message") && sleepPid(3) === undefined;
    // Gemini CLI is started by its user only: the prompt that runs the tool is typed (the mail never is).
    const busy = await busyRuns(lab, idle, (text) => lab.typePrompt(AGENT, text), "gm-busy");
    console.log(`Gemini CLI busy (AfterTool hook), tool end -> request: ${show(busy.afterTool)}; send -> request: ${show(busy.afterSend)}`);
    console.log("Gemini CLI idle: no channel (nothing runs while its prompt waits)");
  } finally {
    await lab.stop();
  }
}

/** The agentmail of git revision `rev`, built in a temp dir (its dist/agentmail). */
function buildRevision(rev: string): { binary: string; dir: string } {
  const dir = mkdtempSync(join(tmpdir(), "agentmail-before-"));
  execFileSync("bash", ["-c", `git archive ${JSON.stringify(rev)} | tar -x -C ${JSON.stringify(dir)}`], { stdio: "inherit" });
  symlinkSync(join(process.cwd(), "node_modules"), join(dir, "node_modules"));
  execFileSync(join(process.cwd(), "node_modules", ".bin", "bun"), ["build.ts"], { cwd: dir, stdio: "ignore" });
  return { binary: join(dir, "dist", "agentmail"), dir };
}

interface BurstFigures {
  requests: number;
  /** agentmail's own text in what reached the model (hook outputs, frames), each distinct one once. */
  mailChars: number;
  /** The text blocks that carried it, with what the agent CLI put around it in the same block. */
  blockChars: number;
  requestChars: number;
  read: number;
  /** Unread, but listed or counted in a frame or a hook's text: a `receive` away. */
  announced: number;
}

/** The text blocks of a request (message contents, tool results, system text), each as a string. */
function textsOf(body: { messages?: { content: unknown }[] }): string[] {
  const texts: string[] = [];
  const visit = (value: unknown) => {
    if (typeof value === "string") texts.push(value);
    else if (Array.isArray(value)) for (const each of value) visit(each);
    else if (value && typeof value === "object") {
      const block = value as { text?: unknown; content?: unknown };
      if (typeof block.text === "string") texts.push(block.text);
      if (block.content !== undefined) visit(block.content);
    }
  };
  for (const message of body?.messages ?? []) visit(message.content);
  return texts;
}

/**
 * agentmail's own text in a text block: from its opening ("You got new mail", a frame's "agentmail: …") to the end of
 * its last message, list line or closing line; the agent CLI's wrapper and whatever it adds to the block left out.
 */
function agentmailPart(text: string): string {
  const starts = [text.indexOf("You got new mail"), text.indexOf("agentmail: ")].filter((at) => at >= 0);
  if (starts.length === 0) return "";
  const start = Math.min(...starts);
  let end = start;
  for (const pattern of [
    /\(burst-\d+\)\.\n?/g,
    /\n- (\S{8} from |and \d+ more \(agentmail inbox)[^\n]*/g,
    /\(\d+ more unread[^\n]*\n?/g,
    /Answer with: agentmail reply <id> "<text>"\./g,
  ])
    for (const match of text.slice(start).matchAll(pattern)) end = Math.max(end, start + match.index + match[0].length);
  return text.slice(start, end);
}

/** 50 messages to a busy Claude Code; what reached its model once the mail was all handed over. */
async function burst(binary: string | undefined, mailman: boolean): Promise<BurstFigures> {
  const lab = new Interactive([], binary);
  try {
    lab.world.mock.otherwise(routeByContent);
    await setUpClaude(lab);
    await launchClaude(lab, AGENT);
    if (mailman) await lab.startMailman();
    const triggered = Date.now();
    if (mailman) await lab.world.send(SENDER, AGENT, "Please wait (RUN-SLEEP-10 burst).");
    else await writeFirstTurn(lab);
    await until("the sleep asked for", () => requestCarrying(lab, "RUN-SLEEP-10", triggered)?.reply, 60_000);
    await until("the sleep running", () => sleepPid(10), 30_000);
    const ids: string[] = [];
    for (let i = 0; i < 50; i++)
      ids.push(await lab.world.send(SENDER, AGENT, `Burst message ${i}: ${"details of the change ".repeat(8)}(burst-${i}).`));
    // Over when the session is idle and has made no request for 10 s: every message read or announced by then, or
    // (the "before" build) what its Stop hook could hand over before Claude Code stopped it (9 blocks in a row).
    const burstStart = Date.now();
    await until(
      "the agent quiet after the burst",
      () => {
        const last = lab.world.mock.conversation.at(-1)?.at ?? 0;
        return last > burstStart && Date.now() - last > 10_000 && claudeSession(lab, AGENT)?.status === "idle";
      },
      900_000,
      () => lab.mailmanLog(),
    );
    const requests = lab.world.mock.conversation.filter((request) => request.at > triggered && textsOf(request.body).length > 0);
    const mailTexts = new Set<string>();
    for (const request of requests)
      for (const text of textsOf(request.body)) if (/burst-\d+|Burst message \d+/.test(text)) mailTexts.add(text);
    if (process.env.BENCH_DETAIL)
      for (const text of mailTexts) console.log(`  ${text.length} chars: ${JSON.stringify(text.slice(0, 300))}`);
    const sent = (
      JSON.parse((await lab.world.agentmail(["sent", "--json"], SENDER)).stdout) as {
        message: string;
        read_flag: boolean;
        delivery?: { state: string };
      }[]
    ).filter((each) => each.message.startsWith("Burst message"));
    return {
      requests: requests.length,
      mailChars: [...mailTexts].reduce((sum, text) => sum + agentmailPart(text).length, 0),
      blockChars: [...mailTexts].reduce((sum, text) => sum + text.length, 0),
      requestChars: requests.reduce((sum, request) => sum + JSON.stringify(request.body).length, 0),
      read: sent.filter((each) => each.read_flag).length,
      announced: sent.filter((each) => each.delivery?.state === "notified").length,
    };
  } finally {
    await lab.stop();
  }
}

/** Without the mailman (the "before" build has no channel), the turn that runs the tool is started through the inbox. */
async function writeFirstTurn(lab: Interactive): Promise<void> {
  const { createConnection } = await import("node:net");
  const socket = String(claudeSession(lab, AGENT)!.messagingSocketPath);
  await new Promise<void>((resolve, reject) => {
    const connection = createConnection(socket);
    const frame = { type: "user", message: { role: "user", content: "Please wait (RUN-SLEEP-10 burst)." }, priority: "next" };
    connection.on("connect", () => connection.end(`${JSON.stringify(frame)}\n`));
    connection.on("error", reject);
    connection.on("close", () => resolve());
  });
}

console.log(
  `load average ${loadavg()
    .map((load) => load.toFixed(1))
    .join(" ")}, ${RUNS} runs`,
);
if (wanted("latency")) {
  await claudeLatency();
  await codexLatency();
  await geminiLatency();
}
if (wanted("burst")) {
  const before = buildRevision(beforeRev);
  try {
    const figures = args.includes("--after-only")
      ? { after: await burst(undefined, true) }
      : { before: await burst(before.binary, false), after: await burst(undefined, true) };
    for (const [when, each] of Object.entries(figures))
      console.log(
        `burst of 50, ${when === "before" ? `before (${beforeRev}, hooks only)` : "after (this build)"}: ${each.requests} model requests, ` +
          `${each.mailChars} characters of agentmail's text reached the model (${each.blockChars} in the text blocks carrying it), ` +
          `${each.requestChars} characters sent in those requests; ` +
          `${each.read} of 50 read, ${each.announced} more announced (listed or counted), ${50 - each.read - each.announced} never shown`,
      );
  } finally {
    rmSync(before.dir, { recursive: true, force: true });
  }
}
console.log(
  `load average ${loadavg()
    .map((load) => load.toFixed(1))
    .join(" ")}`,
);
