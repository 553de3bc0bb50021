/**
 * Compiles src/cli.ts into one native binary: dist/agentmail for the host, or with --all one per
 * linux/darwin × x64/arm64 as dist/agentmail-<os>-<arch>. The binary never reads .env, bunfig.toml,
 * tsconfig.json or package.json from the directory it runs in, and carries the commit and the time it was built from
 * (`agentmail --version`). scripts/release.ts packs the release from the same compile.
 *
 * Two start-up settings, each measured in the README (Benchmarks): a JIT that compiles code only after ten times the
 * usual number of runs (most commands live ~10 ms, too short for compiling to pay; the long-running ones restore
 * the normal policy, see src/cli/jit-policy.ts), and the bytecode the hot commands use laid out together at the
 * front of the executable, as recorded from a first build running them (bench/bytecode-order.ts).
 *
 * The other targets' Bun runtimes: `bun build --compile --target` fetches `@oven/bun-<os>-<arch>` from the npm
 * registry (registry.npmjs.org) once and keeps it in Bun's install cache (~/.bun/install/cache), so a machine that
 * reaches only the npm registry cross-compiles every target.
 */
import { chmodSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import type { Build } from "./src/mail/version.ts";
import { bundlePage } from "./src/web/bundle-page.ts";

export const TARGETS = ["linux-x64", "linux-arm64", "darwin-x64", "darwin-arm64"] as const;
export type Target = (typeof TARGETS)[number];

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

const git = (args: string[]): string | null => {
  const result = Bun.spawnSync(["git", ...args], { cwd: import.meta.dir, stdin: "ignore", stdout: "pipe", stderr: "ignore" });
  return result.exitCode === 0 ? result.stdout.toString().trim() : null;
};

/**
 * The commit of this checkout (`-dirty` when tracked files differ from it; null outside git) and the build time:
 * SOURCE_DATE_EPOCH when set (reproducible builds), else now, to the second.
 */
export function buildInfo(env: Record<string, string | undefined> = process.env): Build {
  const head = git(["rev-parse", "HEAD"]);
  const dirty = head !== null && git(["status", "--porcelain", "--untracked-files=no"]) !== "";
  const epoch = Number(env.SOURCE_DATE_EPOCH);
  const at = env.SOURCE_DATE_EPOCH && Number.isInteger(epoch) ? new Date(epoch * 1000) : new Date();
  return { commit: head === null ? null : `${head}${dirty ? "-dirty" : ""}`, builtAt: at.toISOString().replace(/\.\d{3}Z$/, "Z") };
}

/** The directories of the npm packages the bundle took code from (the bundler's metafile names its inputs). */
function bundledPackages(metafile: Bun.BuildMetafile | undefined): string[] {
  const dirs = new Map<string, string>();
  for (const input of Object.keys(metafile?.inputs ?? {})) {
    const path = resolve(input);
    const at = path.lastIndexOf("/node_modules/") + "/node_modules/".length;
    if (at < "/node_modules/".length) continue;
    const [first, second] = path.slice(at).split("/");
    const name = first!.startsWith("@") ? `${first}/${second}` : first!;
    dirs.set(name, path.slice(0, at) + name);
  }
  return [...dirs.entries()].sort(([a], [b]) => (a < b ? -1 : 1)).map(([, dir]) => dir);
}

/** The web page's script (src/web/page/), bundled once and embedded in every binary as a string. */
let page: Promise<string> | null = null;

/** Compiles one binary; returns the directories of the npm packages bundled into it (for their license notices). */
export async function compile(outfile: string, build: Build, target?: Target, bytecodeOrder: string[] = []): Promise<string[]> {
  page ??= bundlePage();
  const result = await Bun.build({
    entrypoints: [join(import.meta.dir, "src/cli.ts")],
    ...BUNDLE,
    // Each lazily imported command becomes its own chunk inside the binary, with its own builtin imports, so
    // send and receive do not load or parse what only the MCP server or the mailman needs (measured: ~2 ms).
    splitting: true,
    metafile: true,
    define: {
      AGENTMAIL_COMMIT: JSON.stringify(build.commit),
      AGENTMAIL_BUILT_AT: JSON.stringify(build.builtAt),
      AGENTMAIL_PAGE_SCRIPT: JSON.stringify(await page),
    },
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
  return bundledPackages(result.metafile);
}

/** The hot commands' bytecode, recorded from a host build in `dir`; none (a plain layout) when that run fails. */
export async function recordedOrder(dir: string, build: Build): Promise<string[]> {
  const probe = join(dir, "agentmail");
  await compile(probe, build);
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
    const build = buildInfo();
    const order = await recordedOrder(dir, build);
    const outputs = process.argv.includes("--all")
      ? TARGETS.map((target) => [`dist/agentmail-${target}`, target] as const)
      : ([["dist/agentmail", undefined]] as const);
    for (const [outfile, target] of outputs) {
      await compile(outfile, build, target, order);
      console.error(`built ${outfile}${order.length > 0 ? "" : " (no bytecode layout)"}`);
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
