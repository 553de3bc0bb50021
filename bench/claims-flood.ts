/**
 * What one refused claim and one release cost when they meet many claims (issue 30, item 9), against the compiled
 * binary in a private tmux server and a throwaway repository: alice holds N claims (`gen/f0000` …, one `claim` of N
 * paths, as `--auto-claim` gathers them over an agent's edits), bob asks for `gen/**` and is refused, then alice
 * releases everything and bob is told. Reported: the wall time of the refused claim and of the release, how many
 * notices each of them stored, the largest notice and the refusal's size in bytes.
 *
 * Run:  node_modules/.bin/bun build.ts && node_modules/.bin/bun bench/claims-flood.ts   (BENCH_CLAIMS=5000 by default)
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { BINARY, tempRepo } from "../test/support/repo.ts";
import { TmuxServer } from "../test/support/tmux-server.ts";
import { timedSpawn, type Run } from "./timing.ts";

const CLAIMS = Number(process.env.BENCH_CLAIMS ?? 5000);

interface Stored {
  from: string;
  message: string;
}

function notices(mailDir: string, agent: string): Stored[] {
  let text: string;
  try {
    text = readFileSync(join(mailDir, `${agent}.jsonl`), "utf8");
  } catch {
    return [];
  }
  return text
    .split("\n")
    .filter((line) => line !== "")
    .map((line) => JSON.parse(line) as Stored)
    .filter((message) => message.from === "agentmail");
}

const largest = (stored: Stored[]) => Math.max(0, ...stored.map((message) => Buffer.byteLength(JSON.stringify(message))));
const seconds = (run: Run) => `${(run.ms / 1000).toFixed(2)} s`;

const repo = tempRepo("agentmail-bench-claims-flood-");
const tmux = TmuxServer.start(["alice", "bob"], repo.dir);
try {
  const alice = tmux.agent("alice");
  const bob = tmux.agent("bob");
  const paths = Array.from({ length: CLAIMS }, (_, i) => `gen/f${String(i).padStart(4, "0")}.ts`);
  const claimed = await timedSpawn([BINARY, "claim", ...paths], alice, repo.dir);
  if (claimed.code !== 0) throw new Error(`alice's claim failed: ${claimed.stderr}`);

  const refused = await timedSpawn([BINARY, "claim", "gen/**"], bob, repo.dir);
  if (refused.code !== 1) throw new Error(`bob's claim was not refused: ${refused.code} ${refused.stderr}`);
  const toAlice = notices(repo.mailDir, "alice");
  const toBob = notices(repo.mailDir, "bob");

  const released = await timedSpawn([BINARY, "release"], alice, repo.dir);
  if (released.code !== 0) throw new Error(`alice's release failed: ${released.stderr}`);
  const freed = notices(repo.mailDir, "bob").slice(toBob.length);

  console.log(`${CLAIMS} claims of alice; bob claims gen/** (refused), then alice releases them all`);
  console.log(`refused claim  ${seconds(refused)}  error ${Buffer.byteLength(refused.stderr)} bytes`);
  console.log(
    `  notices      ${toAlice.length} to alice (largest ${largest(toAlice)} bytes), ${toBob.length} to bob (largest ${largest(toBob)} bytes)`,
  );
  console.log(`release        ${seconds(released)}`);
  console.log(`  notices      ${freed.length} to bob (largest ${largest(freed)} bytes)`);
} finally {
  tmux.stop();
  repo.remove();
}
