/**
 * What the first call of a built-in method costs a compiled agentmail (bench/reference/first-calls.ts, compiled as
 * build.ts compiles agentmail): methods JavaScriptCore implements in JavaScript are compiled on their first call,
 * once per process, which is why the send/receive path uses loops and no regular expression.
 *
 *   node_modules/.bin/bun bench/builtins.ts      (RUNS=30: the median of that many processes)
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { BUNDLE, EXECUTABLE } from "../build.ts";

const RUNS = Number(process.env.RUNS ?? 30);
const dir = mkdtempSync(join(tmpdir(), "agentmail-bench-builtins-"));
try {
  const outfile = join(dir, "first-calls");
  const result = await Bun.build({
    entrypoints: [join(import.meta.dir, "reference", "first-calls.ts")],
    ...BUNDLE,
    compile: { outfile, ...EXECUTABLE },
  });
  if (!result.success) throw new Error(`cannot build bench/reference/first-calls.ts: ${result.logs.join("\n")}`);
  const samples = new Map<string, { first: number[]; second: number[] }>();
  for (let run = 0; run < RUNS; run++) {
    const output = Bun.spawnSync([outfile]).stdout.toString();
    for (const line of output.trim().split("\n")) {
      const words = line.split(" ");
      const second = Number(words.pop());
      const first = Number(words.pop());
      const name = words.join(" ");
      const entry = samples.get(name) ?? { first: [], second: [] };
      entry.first.push(first);
      entry.second.push(second);
      samples.set(name, entry);
    }
  }
  const median = (values: number[]) => values.sort((a, b) => a - b)[Math.floor(values.length / 2)]!;
  console.log(`first and second call in a compiled binary, median of ${RUNS} processes (µs)\n`);
  console.log("| call | first | second |\n|---|---:|---:|");
  for (const [name, { first, second }] of samples) console.log(`| ${name} | ${median(first)} | ${median(second)} |`);
} finally {
  rmSync(dir, { recursive: true, force: true });
}
