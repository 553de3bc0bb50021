import packageJson from "../../package.json" with { type: "json" };

/** Embedded at build time: the compiled binary carries the version it was built from. */
export const VERSION: string = packageJson.version;

// Set by build.ts (Bun.build's `define`); a run from source has neither.
declare const AGENTMAIL_COMMIT: string | undefined;
declare const AGENTMAIL_BUILT_AT: string | undefined;

/** Where a binary came from: the commit it was built from (`-dirty` when the work tree had changes) and when. */
export interface Build {
  commit: string | null;
  builtAt: string | null;
}

export const BUILD: Build = {
  commit: typeof AGENTMAIL_COMMIT === "string" ? AGENTMAIL_COMMIT : null,
  builtAt: typeof AGENTMAIL_BUILT_AT === "string" ? AGENTMAIL_BUILT_AT : null,
};

/**
 * What `--version` prints: the version first (what scripts and doctor read), then where the binary came from:
 * `0.1.0 (commit 1a2b3c4d5e6f, built 2026-11-29T10:00:00Z)`; only the version when run from source.
 */
export function versionLine(version: string, build: Build | undefined): string {
  if (!build || (build.commit === null && build.builtAt === null)) return version;
  const commit = build.commit === null ? "unknown" : build.commit.replace(/^([0-9a-f]{12})[0-9a-f]*/, "$1");
  return `${version} (commit ${commit}, built ${build.builtAt ?? "unknown"})`;
}

/** The version a `--version` line names: its first word (older binaries print nothing else). */
export const versionIn = (line: string): string => line.trim().split(/\s+/, 1)[0] ?? "";
