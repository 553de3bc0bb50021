/** A throwaway repository and HOME for each test of a file (tests of `hooks` edit settings under both). */
import { afterEach, beforeEach } from "bun:test";
import { mkdtempSync, realpathSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { runInProcess } from "./in-process.ts";
import { tempRepo } from "./repo.ts";

export interface RepoAndHome {
  repo: ReturnType<typeof tempRepo>;
  /** Its real path (macOS puts tmpdir behind a symlink), as paths in settings files show it. */
  home: string;
}

/** Call at the top of a test file: each test gets a fresh repository and HOME, removed after it. */
export function freshRepoAndHome(): RepoAndHome {
  const world = {} as RepoAndHome;
  beforeEach(() => {
    world.repo = tempRepo();
    world.home = realpathSync(mkdtempSync(join(tmpdir(), "agentmail-home-")));
  });
  afterEach(() => {
    world.repo.remove();
    rmSync(world.home, { recursive: true, force: true });
  });
  return world;
}

/** `agentmail hooks …` in process, in the world's repository (or `cwd`) with its HOME, and no settings location of the real user's. */
export const hooksInProcess = (world: RepoAndHome, args: string[], cwd = world.repo.dir) =>
  runInProcess(["hooks", ...args], {
    cwd,
    env: { HOME: world.home, XDG_STATE_HOME: join(world.home, "state"), CLAUDE_CONFIG_DIR: "", CODEX_HOME: "" },
  });
