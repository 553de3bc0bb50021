/**
 * Agents on several hosts sharing one Redis: each host is its own tmux server, with its own clone of one repository
 * (the same `origin`, so the same default namespace) and its own host identity (AGENTMAIL_HOST). Everything is
 * private to the test: the redis-server on a unix socket in a temp dir, the tmux servers, the clones.
 */
import { mkdtempSync, realpathSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { am, start, type Result, type Running } from "./e2e.ts";
import { RedisServer } from "./redis-server.ts";
import { TmuxServer } from "./tmux-server.ts";

export const ORIGIN = "git@github.com:acme/widgets.git";

function git(args: string[], cwd: string): void {
  const result = Bun.spawnSync(["git", ...args], { cwd, stdin: "ignore" });
  if (result.exitCode !== 0) throw new Error(`git ${args.join(" ")}: ${result.stderr.toString()}`);
}

export class Host {
  readonly name: string;
  readonly clone: string;
  readonly tmux: TmuxServer;
  readonly #url: () => string;
  readonly #made: string[] = [];

  constructor(name: string, windows: string[], url: () => string) {
    this.name = name;
    this.#url = url;
    this.clone = realpathSync(mkdtempSync(join(tmpdir(), `agentmail-${name}-`)));
    git(["init", "-q", this.clone], this.clone);
    git(["remote", "add", "origin", ORIGIN], this.clone);
    this.tmux = TmuxServer.start(windows, this.clone);
  }

  /** The environment of a process running in `agent`'s pane on this host. */
  env(agent: string, extra: Record<string, string> = {}): Record<string, string> {
    return { ...this.tmux.agent(agent).env, AGENTMAIL_URL: this.#url(), AGENTMAIL_HOST: this.name, NO_COLOR: "1", ...extra };
  }

  /** `agent`'s environment without AGENTMAIL_URL: the file store (with `fresh`, an empty one of its own). */
  fileStoreEnv(options: { fresh?: boolean } = {}): Record<string, string> {
    const pane: Record<string, string> = { ...[...this.tmux.agents.values()][0]!.env, AGENTMAIL_HOST: this.name, NO_COLOR: "1" };
    const { AGENTMAIL_URL: _, ...env } = pane;
    if (options.fresh) {
      env.AGENTMAIL_DIR = mkdtempSync(join(tmpdir(), "agentmail-fresh-store-"));
      this.#made.push(env.AGENTMAIL_DIR);
    }
    return env;
  }

  /** Runs the binary as `agent` on this host with `base` (from env or fileStoreEnv) for the pane's variables. */
  amWith(base: Record<string, string>, agent: string, args: string[]): Promise<Result> {
    return am(args, { env: { ...base, ...this.#pane(agent) }, cwd: this.clone });
  }

  startWith(base: Record<string, string>, agent: string, args: string[]): Running {
    return start(args, { env: { ...base, ...this.#pane(agent) }, cwd: this.clone });
  }

  #pane(agent: string): Record<string, string> {
    const { TMUX, TMUX_PANE } = this.tmux.agent(agent).env;
    return { TMUX: TMUX!, TMUX_PANE: TMUX_PANE! };
  }

  /** Runs the binary as `agent` on this host. */
  am(agent: string, args: string[], extra: Record<string, string> = {}): Promise<Result> {
    return am(args, { env: this.env(agent, extra), cwd: this.clone });
  }

  start(agent: string, args: string[], extra: Record<string, string> = {}): Running {
    return start(args, { env: this.env(agent, extra), cwd: this.clone });
  }

  remove(): void {
    this.tmux.stop();
    for (const dir of [this.clone, ...this.#made]) rmSync(dir, { recursive: true, force: true });
  }
}

/** A Redis server and hosts on it; `remove` stops everything it started. */
export class Hosts {
  readonly redis: RedisServer;
  readonly hosts: Host[] = [];

  private constructor(redis: RedisServer) {
    this.redis = redis;
  }

  static async start(layout: Record<string, string[]>, options: Parameters<typeof RedisServer.start>[0] = {}): Promise<Hosts> {
    const hosts = new Hosts(await RedisServer.start(options));
    for (const [name, windows] of Object.entries(layout)) hosts.hosts.push(new Host(name, windows, () => hosts.redis.url));
    return hosts;
  }

  host(name: string): Host {
    const host = this.hosts.find((each) => each.name === name);
    if (!host) throw new Error(`no host ${name}`);
    return host;
  }

  async remove(): Promise<void> {
    for (const host of this.hosts) host.remove();
    await this.redis.remove();
  }
}
