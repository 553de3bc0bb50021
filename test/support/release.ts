/**
 * A release built as a maintainer builds it (`npm run release`), into a temporary directory removed afterwards: all
 * four targets, or only this machine's (the everyday tests that install it need no other).
 */
import { mkdtempSync, readFileSync, realpathSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { removeDir } from "./repo.ts";

const ROOT = join(import.meta.dir, "..", "..");

/** This machine's target, as the release names it: linux-x64, darwin-arm64, … */
export const HOST_TARGET = `${process.platform}-${process.arch}`;

export interface ReleaseManifest {
  version: string;
  commit: string | null;
  built_at: string;
  files: { name: string; size: number; sha256: string; os?: string; arch?: string }[];
}

export interface BuiltRelease {
  /** The release directory (what dist/release holds after `npm run release`). */
  dir: string;
  manifest: ReleaseManifest;
  /** The archive of a target. */
  archive(target: string): string;
  remove(): void;
}

export function buildRelease(targets?: string[]): BuiltRelease {
  const scratch = realpathSync(mkdtempSync(join(tmpdir(), "agentmail-release-test-")));
  const dir = join(scratch, "release");
  const args = ["run", "--silent", "release", "--", "--out", dir, ...(targets ? ["--targets", targets.join(",")] : [])];
  const result = Bun.spawnSync(["npm", ...args], { cwd: ROOT, stdin: "ignore", stdout: "pipe", stderr: "pipe" });
  if (result.exitCode !== 0) {
    removeDir(scratch);
    throw new Error(`npm ${args.join(" ")} exited ${result.exitCode}:\n${result.stderr.toString().slice(-3000)}`);
  }
  const manifest = JSON.parse(readFileSync(join(dir, "release.json"), "utf8")) as ReleaseManifest;
  return {
    dir,
    manifest,
    archive: (target) => join(dir, `agentmail-${manifest.version}-${target}.tar.gz`),
    remove: () => removeDir(scratch),
  };
}

export const sha256 = (path: string) => new Bun.CryptoHasher("sha256").update(readFileSync(path)).digest("hex");
