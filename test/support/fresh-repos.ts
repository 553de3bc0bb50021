/**
 * What most end-to-end files share: one private tmux server for the whole file, started in a scratch directory
 * outside any repository, and a fresh repository for each test. The parts are read through the returned object once
 * the hooks have run; `setup` adds what a file needs besides (more windows, another session).
 */
import { afterAll, afterEach, beforeAll, beforeEach } from "bun:test";
import { mkdtempSync, realpathSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { am, type Result, type RunOptions } from "./e2e.ts";
import { tempRepo } from "./repo.ts";
import { TmuxServer } from "./tmux-server.ts";

export interface ServerWithFreshRepos {
  readonly server: TmuxServer;
  /** The scratch directory the windows start in: outside any repository, removed with the server. */
  readonly scratch: string;
  /** This test's repository (mail in its .git/mail). */
  readonly repo: ReturnType<typeof tempRepo>;
  /** The environment of the agent in this window. */
  env(name: string): Record<string, string>;
  /** An agent's mailbox file in this test's repository. */
  box(name: string): string;
  /** `agentmail send <args>` from an agent's window, in this test's repository. */
  send(from: string, args: string[], stdin?: RunOptions["stdin"]): Promise<Result>;
  /** `agentmail receive <args>` in an agent's window, in this test's repository. */
  receive(who: string, args?: string[]): Promise<Result>;
}

export function serverWithFreshRepos(
  prefix: string,
  windows: string[],
  setup?: (server: TmuxServer, scratch: string) => void,
): ServerWithFreshRepos {
  const world = {
    env: (name: string) => world.server.agent(name).env,
    box: (name: string) => join(world.repo.mailDir, `${name}.jsonl`),
    send: (from: string, args: string[], stdin?: RunOptions["stdin"]) =>
      am(["send", ...args], { env: world.env(from), cwd: world.repo.dir, stdin }),
    receive: (who: string, args: string[] = []) => am(["receive", ...args], { env: world.env(who), cwd: world.repo.dir }),
  } as { -readonly [K in keyof ServerWithFreshRepos]: ServerWithFreshRepos[K] };
  beforeAll(() => {
    world.scratch = realpathSync(mkdtempSync(join(tmpdir(), prefix)));
    world.server = TmuxServer.start(windows, world.scratch);
    setup?.(world.server, world.scratch);
  });
  afterAll(() => {
    world.server?.stop();
    if (world.scratch) rmSync(world.scratch, { recursive: true, force: true });
  });
  beforeEach(() => {
    world.repo = tempRepo();
  });
  afterEach(() => world.repo.remove());
  return world;
}
