/**
 * How fast, and how much, mail reaches a real agent CLI's model through its own channel: each CLI interactive in a
 * private tmux server against the mock model (test/agents/launch.ts), agentmail's hooks installed, the mailman
 * running, every time taken from the mock's request log.
 *
 *   latency   median of RUNS (10) from `agentmail send` starting to the model's request carrying the mail:
 *             idle (Claude Code, Codex CLI), delivered by `send` itself along the route the mailman verified, and by
 *             the mailman alone (the route forgotten first); busy (all three), mail sent while a `sleep 3` runs: from
 *             the sleep's end to the request, and from the send to it
 *   burst     50 messages sent to Claude Code and to Codex CLI, each idle and busy (while its tool runs for 10 s): the
 *             model requests that followed, agentmail's characters that reached the model (its own text in each
 *             distinct text block carrying mail, once; the blocks themselves also hold what the agent CLI puts around
 *             it), the characters of all those requests (the context each one re-sends), and how many bodies reached
 *             the model whole, listed or counted (test/agents/burst.ts); "before" is the build of --before (a git
 *             revision, bc43e3d by default), "after" this build (alone with --after-only), both with the mailman
 *
 * Run:  npm run bench:channels [-- latency|burst] [--before=<rev>] [--after-only]   (BENCH_RUNS=10; BENCH_DETAIL=1
 *       prints the start of each text block that carried mail)
 */
import { existsSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { loadavg } from "node:os";
import { join } from "node:path";
import type { Recorded } from "../test/support/mock-model/server.ts";
import { burstFigures, describeBurst, sendBurst, textsOf, type BurstFigures } from "../test/agents/burst.ts";
import { buildRevision } from "./revision.ts";
import { loadedIn } from "../test/agents/codex-raw-control.ts";
import { AGENT, carries, Interactive, SENDER, until } from "../test/agents/interactive.ts";
import {
  claudeSession,
  isCodexTitle,
  launchClaude,
  launchCodex,
  launchGemini,
  routeByContent,
  setUpClaude,
  setUpCodex,
} from "../test/agents/launch.ts";

const RUNS = Number(process.env.BENCH_RUNS ?? 10);
const PACE_MS = 2_500;
const args = process.argv.slice(2);
const wanted = (part: string) => !args.some((arg) => !arg.startsWith("--")) || args.includes(part);
const beforeRev = args.find((arg) => arg.startsWith("--before="))?.slice("--before=".length) ?? "bc43e3d";

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

type BurstCase = "claude-idle" | "claude-busy" | "codex-idle" | "codex-busy";
const BURST_CASES: BurstCase[] = ["claude-idle", "claude-busy", "codex-idle", "codex-busy"];

/**
 * 50 messages to an agent CLI, idle or while its tool runs for 10 s (`binary`: the build, both with a mailman started
 * by hand: the "before" build has nothing that brings one up); what reached its model once the mail was all handed
 * over and the agent was quiet for 10 s.
 */
async function burst(binary: string | undefined, kind: BurstCase): Promise<BurstFigures> {
  const lab = new Interactive([], binary);
  try {
    lab.world.mock.otherwise(routeByContent);
    const codex = kind.startsWith("codex");
    let quiet: () => boolean | Promise<boolean>;
    if (codex) {
      const home = await setUpCodex(lab, [lab.world.repo.dir]);
      const loaded = () => loadedIn(home, lab.world.repo.dir);
      quiet = loaded;
      await launchCodex(lab, AGENT, lab.world.repo.dir, loaded);
    } else {
      await setUpClaude(lab);
      await launchClaude(lab, AGENT);
      quiet = () => claudeSession(lab, AGENT)?.status === "idle";
    }
    await lab.startMailman();
    const since = Date.now();
    if (kind.endsWith("busy")) {
      await lab.world.send(SENDER, AGENT, "Please wait (RUN-SLEEP-10 burst).");
      await until(
        "the sleep running",
        () => sleepPid(10),
        60_000,
        () => lab.mailmanLog(),
      );
    }
    const ids = await sendBurst(lab, AGENT);
    const burstStart = Date.now();
    const isTitle = (request: Recorded) => isCodexTitle(request.body);
    await until(
      "the agent quiet after the burst",
      async () => {
        const last = lab.world.mock.conversation.at(-1)?.at ?? 0;
        return last > burstStart && Date.now() - last > 10_000 && (await quiet());
      },
      900_000,
      () => lab.mailmanLog(),
    );
    const figures = await burstFigures(lab, since, ids, isTitle);
    if (process.env.BENCH_DETAIL)
      for (const request of lab.world.mock.conversation.filter((each) => each.at > since && !isTitle(each)))
        for (const text of textsOf(request.body))
          if (/burst-\d+/.test(text)) console.log(`  ${text.length} chars: ${JSON.stringify(text.slice(0, 300))}`);
    return figures;
  } finally {
    await lab.stop();
  }
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
  const before = args.includes("--after-only") ? null : buildRevision(beforeRev);
  try {
    for (const kind of BURST_CASES) {
      if (before) console.log(describeBurst(`burst of 50, ${kind}, before (${beforeRev})`, await burst(before.binary, kind)));
      console.log(describeBurst(`burst of 50, ${kind}, after (this build)`, await burst(undefined, kind)));
    }
  } finally {
    if (before) rmSync(before.dir, { recursive: true, force: true });
  }
}
console.log(
  `load average ${loadavg()
    .map((load) => load.toFixed(1))
    .join(" ")}`,
);
