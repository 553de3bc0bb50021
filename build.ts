/**
 * Compiles src/cli.ts into one native binary: dist/agentmail for the host, or with --all one per
 * linux/darwin × x64/arm64 as dist/agentmail-<os>-<arch>. The binary never reads .env, bunfig.toml,
 * tsconfig.json or package.json from the directory it runs in.
 *
 * Two start-up settings, each measured in the README (Benchmarks): a JIT that compiles code only after ten times the
 * usual number of runs (most commands live ~10 ms, too short for compiling to pay; the long-running ones restore
 * the normal policy, see src/cli/jit-policy.ts), and the bytecode the hot commands use laid out together at the
 * front of the executable, as recorded from a first build running them (bench/bytecode-order.ts).
 */
import { chmodSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { bundlePage } from "./src/web/bundle-page.ts";

const TARGETS = ["linux-x64", "linux-arm64", "darwin-x64", "darwin-arm64"] as const;

/** How agentmail's code is bundled; bench/ compiles its reference programs the same way. */
export const BUNDLE = { minify: true, bytecode: true, format: "esm" } as const;
/** What the executable does at run time; bench/ gives its reference programs the same. */
export const EXECUTABLE = {
  autoloadDotenv: false,
  autoloadBunfig: false,
  autoloadTsconfig: false,
  autoloadPackageJson: false,
  jitPolicy: 10,
} as const;

/** The web page's script (src/web/page/), bundled once and embedded in every binary as a string. */
let page: Promise<string> | null = null;

async function compile(outfile: string, target?: (typeof TARGETS)[number], bytecodeOrder: string[] = []): Promise<void> {
  page ??= bundlePage();
  const result = await Bun.build({
    entrypoints: ["src/cli.ts"],
    ...BUNDLE,
    define: { AGENTMAIL_PAGE_SCRIPT: JSON.stringify(await page) },
    // Each lazily imported command becomes its own chunk inside the binary, with its own builtin imports, so
    // send and receive do not load or parse what only the MCP server or the mailman needs (measured: ~2 ms).
    splitting: true,
    compile: {
      ...(target ? { target: `bun-${target}` as Bun.Build.CompileTarget } : {}),
      outfile,
      ...EXECUTABLE,
      bytecodeOrder: bytecodeOrder.length > 0 && bytecodeOrder,
    },
  });
  if (!result.success) {
    for (const message of result.logs) console.error(message);
    throw new Error(`build of ${outfile} failed`);
  }
  chmodSync(outfile, 0o755);
}

/** The hot commands' bytecode, recorded from a host build; none (a plain layout) when that run fails. */
async function recordedOrder(dir: string): Promise<string[]> {
  const probe = join(dir, "agentmail");
  await compile(probe);
  try {
    const { recordHotPath } = await import("./bench/bytecode-order.ts");
    return recordHotPath(probe, dir);
  } catch (error) {
    console.error(`warning: built without a bytecode layout, since running the hot commands failed: ${(error as Error).message}`);
    return [];
  }
}

if (import.meta.main) {
  const dir = mkdtempSync(join(tmpdir(), "agentmail-build-"));
  try {
    const order = await recordedOrder(dir);
    const outputs = process.argv.includes("--all")
      ? TARGETS.map((target) => [`dist/agentmail-${target}`, target] as const)
      : ([["dist/agentmail", undefined]] as const);
    for (const [outfile, target] of outputs) {
      await compile(outfile, target, order);
      console.error(`built ${outfile}${order.length > 0 ? "" : " (no bytecode layout)"}`);
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
