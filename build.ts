/**
 * Compiles src/cli.ts into one native binary: dist/agentmail for the host, or with --all one per
 * linux/darwin × x64/arm64 as dist/agentmail-<os>-<arch>. The binary never reads .env, bunfig.toml,
 * tsconfig.json or package.json from the directory it runs in.
 */
import { chmodSync } from "node:fs";

const TARGETS = ["linux-x64", "linux-arm64", "darwin-x64", "darwin-arm64"] as const;

async function compile(outfile: string, target?: (typeof TARGETS)[number]): Promise<void> {
  const result = await Bun.build({
    entrypoints: ["src/cli.ts"],
    minify: true,
    bytecode: true,
    // Each lazily imported command becomes its own chunk inside the binary, with its own builtin imports, so
    // send and receive do not load or parse what only the MCP server or the mailman needs (measured: ~2 ms).
    splitting: true,
    format: "esm",
    compile: {
      ...(target ? { target: `bun-${target}` as Bun.Build.CompileTarget } : {}),
      outfile,
      autoloadDotenv: false,
      autoloadBunfig: false,
      autoloadTsconfig: false,
      autoloadPackageJson: false,
    },
  });
  if (!result.success) {
    for (const message of result.logs) console.error(message);
    throw new Error(`build of ${outfile} failed`);
  }
  chmodSync(outfile, 0o755);
  console.error(`built ${outfile}`);
}

if (process.argv.includes("--all")) {
  for (const target of TARGETS) await compile(`dist/agentmail-${target}`, target);
} else {
  await compile("dist/agentmail");
}
