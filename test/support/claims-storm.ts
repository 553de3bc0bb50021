/**
 * A storm of agents claiming overlapping paths at once through the compiled binary, with SIGKILLs at random moments,
 * for any store: what must never happen is two agents holding overlapping claims where either is exclusive.
 *
 * Checked two ways, neither on timing. (1) A reader polls the store all along: no snapshot may hold two such claims.
 * (2) Each agent's holds, as the test saw them: from its `claim` exiting 0 to the start of its `release`. That span
 * lies within the claim's life in the store (stored before the exit, removed after the release began), so if two
 * agents' stored claims never overlap in time, the spans the test saw do not either: any two spans of conflicting
 * claims, ordered by one counter in this process, must be disjoint.
 */
import { overlaps } from "../../src/claims/patterns.ts";
import type { FileClaim } from "../../src/claims/claims.ts";
import { am, type Result } from "./e2e.ts";

interface Pick {
  path: string;
  shared: boolean;
}

/** Paths that overlap one another in every way the dialect allows, some shared. */
const PICKS: Pick[] = [
  { path: "src/**", shared: false },
  { path: "src/a.ts", shared: false },
  { path: "src/*.ts", shared: false },
  { path: "src/a.ts", shared: true },
  { path: "src/*.ts", shared: true },
  { path: "**/a.ts", shared: false },
  { path: "src/lib/b.ts", shared: false },
];

interface Hold {
  agent: string;
  path: string;
  shared: boolean;
  from: number;
  to: number;
}

export interface StormReport {
  /** Claims granted (exit 0 and seen). */
  granted: number;
  refused: number;
  killed: number;
  /** Snapshots the reader took. */
  snapshots: number;
  /** Pairs of conflicting claims found in one snapshot. */
  snapshotViolations: string[];
  /** Pairs of conflicting holds whose spans overlapped. */
  spanViolations: string[];
  /** Runs that failed otherwise (a crash, a lock error, output that is not a claim). */
  failures: Result[];
  /** What the store held once every agent had released. */
  left: FileClaim[];
}

export interface StormWorld {
  env(agent: string): Record<string, string>;
  /** Where the agent works: its clone of the repository. */
  cwd(agent: string): string;
  /** The claims as stored, read the way another process would. */
  read(): Promise<FileClaim[]>;
}

const conflict = (a: { holder?: string; path: string; shared: boolean }, b: { path: string; shared: boolean }) =>
  !(a.shared && b.shared) && overlaps(a.path, b.path);

export async function claimStorm(world: StormWorld, agents: string[], rounds: number): Promise<StormReport> {
  let clock = 0;
  const holds: Hold[] = [];
  const report: StormReport = {
    granted: 0,
    refused: 0,
    killed: 0,
    snapshots: 0,
    snapshotViolations: [],
    spanViolations: [],
    failures: [],
    left: [],
  };
  const run = (agent: string, args: string[], killAfterMs?: number) =>
    am(args, { env: world.env(agent), cwd: world.cwd(agent), killAfterMs, timeoutMs: 60_000 });

  /** Releases everything the agent holds, again until a release ends on its own (one may be killed on purpose). */
  async function releaseAll(agent: string, kill: boolean): Promise<void> {
    for (let attempt = 0; attempt < 20; attempt++) {
      const killAfter = kill && attempt === 0 && Math.random() < 0.3 ? Math.random() * 30 : undefined;
      const result = await run(agent, ["release"], killAfter);
      if (result.killed) {
        report.killed++;
        continue;
      }
      if (result.code === 0) return;
      report.failures.push(result);
    }
  }

  async function agentLoop(agent: string): Promise<void> {
    for (let round = 0; round < rounds; round++) {
      const pick = PICKS[Math.floor(Math.random() * PICKS.length)]!;
      const killAfter = Math.random() < 0.35 ? Math.random() * 40 : undefined;
      const result = await run(agent, ["claim", pick.path, ...(pick.shared ? ["--shared"] : [])], killAfter);
      if (result.killed) {
        report.killed++;
        await releaseAll(agent, false);
        continue;
      }
      if (result.code === 0 && result.stdout.startsWith(`claimed ${pick.path} (`)) {
        report.granted++;
        const hold: Hold = { agent, path: pick.path, shared: pick.shared, from: ++clock, to: Number.POSITIVE_INFINITY };
        holds.push(hold);
        // Held a while, as an agent holds a claim while it edits: the store must show it meanwhile.
        const stored = await world.read();
        if (!stored.some((claim) => claim.holder === agent && claim.path === pick.path)) {
          report.snapshotViolations.push(`${agent}'s granted claim on ${pick.path} is not stored`);
        }
        await new Promise((done) => setTimeout(done, Math.random() * 30));
        hold.to = ++clock;
        await releaseAll(agent, true);
        continue;
      }
      if (result.code === 1 && result.stderr.includes(" is claimed by ")) {
        report.refused++;
        continue;
      }
      report.failures.push(result);
    }
  }

  let storming = true;
  const reader = (async () => {
    while (storming) {
      let claims: FileClaim[];
      try {
        claims = await world.read();
      } catch (error) {
        report.snapshotViolations.push(`unreadable: ${error instanceof Error ? error.message : String(error)}`);
        continue;
      }
      report.snapshots++;
      for (let i = 0; i < claims.length; i++)
        for (let j = i + 1; j < claims.length; j++) {
          const [a, b] = [claims[i]!, claims[j]!];
          if (a.holder !== b.holder && conflict(a, b)) report.snapshotViolations.push(`${a.holder}:${a.path} with ${b.holder}:${b.path}`);
        }
      await new Promise((done) => setTimeout(done, 5));
    }
  })();
  await Promise.all(agents.map(agentLoop));
  storming = false;
  await reader;
  for (let i = 0; i < holds.length; i++)
    for (let j = i + 1; j < holds.length; j++) {
      const [a, b] = [holds[i]!, holds[j]!];
      const together = a.from < b.to && b.from < a.to;
      if (a.agent !== b.agent && together && conflict(a, b)) report.spanViolations.push(`${a.agent}:${a.path} with ${b.agent}:${b.path}`);
    }
  report.left = await world.read();
  return report;
}
