/**
 * What the tests of the person's views (watch, web) share: agents in a private tmux server over one repository, on
 * the file store or on a private redis-server (every process then gets AGENTMAIL_URL and one namespace), and the
 * person, who runs agentmail outside tmux as AGENTMAIL_HUMAN. Everything is started here and removed by `remove`.
 */
import { afterEach, beforeEach } from "bun:test";
import { RedisClient } from "bun";
import { mkdtempSync, realpathSync, rmSync, symlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type AgentFacts, Room, type RoomOptions, UNKNOWN_PANE } from "../../src/room/room.ts";
import { FileStore } from "../../src/store/file/file-store.ts";
import { chunksOf } from "./byte-stream.ts";
import { am, BINARY, patient, type Result } from "./e2e.ts";
import { RedisServer } from "./redis-server.ts";
import { tempRepo } from "./repo.ts";
import { git, SHELL } from "./projects.ts";
import { outsideTmuxEnv, TmuxServer } from "./tmux-server.ts";
import { waitFor } from "./workflow.ts";

export type Engine = "file" | "redis";

/** A room's facts when nothing outside the store is known (no tmux, no mailman, no claims), or what `extra` says. */
export const roomFacts =
  (extra: Partial<AgentFacts> = {}) =>
  async (): Promise<AgentFacts> => ({ pane: () => UNKNOWN_PANE, reach: () => "pull", claims: [], mailman: null, ...extra });

export const HUMAN = "ana";

let worlds = 0;

/** A second project on the same tmux server: its repository, and its agents' windows by `name@project`. */
export interface OtherProject {
  name: string;
  repo: ReturnType<typeof tempRepo>;
  panes: Map<string, string>;
}

export class RoomWorld {
  readonly scratch: string;
  readonly repo: ReturnType<typeof tempRepo>;
  readonly tmux: TmuxServer;
  readonly redis: RedisServer | null;
  /** The second project, when the world has one (`app` is then this repository's name, set as its alias). */
  readonly other: OtherProject | null = null;
  /** How agentmail names each project (`app`, the other's name) in addresses it writes: its alias, on Redis its namespace. */
  readonly projectNames = new Map<string, string>();
  readonly #store: Record<string, string>;

  private constructor(engine: Engine, agents: string[], redis: RedisServer | null, other?: { project: string; agents: string[] }) {
    this.scratch = realpathSync(mkdtempSync(join(tmpdir(), "agentmail-room-")));
    this.repo = tempRepo();
    this.tmux = TmuxServer.start(agents, this.repo.dir);
    this.redis = redis;
    const world = ++worlds;
    if (!other) {
      this.#store = engine === "redis" ? { AGENTMAIL_URL: redis!.url, AGENTMAIL_NAMESPACE: `room-${process.pid}-${world}` } : {};
      return;
    }
    // Two projects: each repository is its own store (on Redis, the namespace its origin gives), named by its alias.
    this.#store = engine === "redis" ? { AGENTMAIL_URL: redis!.url } : {};
    const repo = tempRepo();
    this.other = { name: other.project, repo, panes: new Map() };
    for (const [dir, name] of [
      [this.repo.dir, "app"],
      [repo.dir, other.project],
    ] as const) {
      git(["config", "agentmail.project", name], dir);
      git(["remote", "add", "origin", `https://example.test/room-${process.pid}-${world}/${name}.git`], dir);
      this.projectNames.set(name, engine === "redis" ? `example.test/room-${process.pid}-${world}/${name}` : name);
    }
    for (const agent of other.agents) {
      const line = this.tmux.run([
        "new-window",
        "-d",
        "-P",
        "-F",
        "#{pane_id}",
        "-t",
        `${this.tmux.session}:`,
        "-n",
        agent,
        "-c",
        repo.dir,
        SHELL,
      ]);
      this.other.panes.set(`${agent}@${other.project}`, line.trim());
    }
  }

  /**
   * Agents in their windows, each registered (`status ready`) as its SessionStart hook would; with `other`, a second
   * project's agents too, in windows of the same server working in its own repository (addressed `name@project`).
   */
  static async start(engine: Engine, agents: string[], other?: { project: string; agents: string[] }): Promise<RoomWorld> {
    const redis = engine === "redis" ? await RedisServer.start() : null;
    const world = new RoomWorld(engine, agents, redis, other);
    for (const agent of [...agents, ...(world.other?.panes.keys() ?? [])]) {
      const result = await world.am(agent, ["status", "ready"]);
      if (result.code !== 0) throw new Error(`${agent} could not register: ${result.stderr}`);
    }
    return world;
  }

  /** The pane of an agent: `name`, or `name@project` of the other project. */
  paneOf(agent: string): string {
    return this.other?.panes.get(agent) ?? this.tmux.agent(agent).paneId;
  }

  /** Where an agent works. */
  cwdOf(agent: string): string {
    return this.other?.panes.has(agent) ? this.other.repo.dir : this.repo.dir;
  }

  /** The environment of a process in an agent's pane. */
  env(agent: string, extra: Record<string, string> = {}): Record<string, string> {
    const base = this.other?.panes.has(agent)
      ? { ...this.tmux.agent([...this.tmux.agents.keys()][0]!).env, TMUX_PANE: this.other.panes.get(agent)! }
      : this.tmux.agent(agent).env;
    return { ...base, ...this.#store, NO_COLOR: "1", ...extra };
  }

  /** The person's environment: outside tmux, named by AGENTMAIL_HUMAN. */
  humanEnv(extra: Record<string, string> = {}): Record<string, string> {
    return outsideTmuxEnv({ ...this.#store, AGENTMAIL_HUMAN: HUMAN, ...extra });
  }

  /** A shell command line that runs the binary with the person's store settings (for a tmux window). */
  humanCommand(args: string, extra: Record<string, string> = {}): string {
    const store = Object.entries({ ...this.#store, ...extra }).map(([key, value]) => `${key}='${value}'`);
    return ["env", "-u", "TMUX", "-u", "TMUX_PANE", ...store, `AGENTMAIL_HUMAN=${HUMAN}`, BINARY, args].join(" ");
  }

  /** Types a command line running the binary into an agent's pane, as a person (or an agent CLI's shell tool) would. */
  typeIn(agent: string, args: string): void {
    const store = Object.entries(this.#store).map(([key, value]) => `${key}='${value}'`);
    this.tmux.run(["send-keys", "-t", this.paneOf(agent), "-l", [...store, BINARY, args].join(" ")]);
    this.tmux.run(["send-keys", "-t", this.paneOf(agent), "Enter"]);
  }

  am(agent: string, args: string[], timeoutMs?: number): Promise<Result> {
    return am(args, { env: this.env(agent), cwd: this.cwdOf(agent), timeoutMs });
  }

  /**
   * Makes the store refuse to store mail for `agent` until the returned function is called: on the file store its
   * mailbox's lock is held by a process of another host (never broken from here, so a send gives up after
   * AGENTMAIL_LOCK_TIMEOUT with `locked`); on Redis the server is out of memory (`maxmemory 1`), so every write fails.
   */
  async blockWrites(agent: string): Promise<() => Promise<void>> {
    if (this.redis) {
      const client = new RedisClient(this.redis.url);
      await client.send("CONFIG", ["SET", "maxmemory", "1"]);
      return async () => {
        await client.send("CONFIG", ["SET", "maxmemory", "0"]);
        client.close();
      };
    }
    const lock = join(this.repo.mailDir, `${agent}.jsonl.lock`);
    symlinkSync("am1:1:-:0badc0de:elsewhere", lock);
    return async () => rmSync(lock, { force: true });
  }

  async remove(): Promise<void> {
    this.tmux.stop();
    await this.redis?.remove();
    this.repo.remove();
    this.other?.repo.remove();
    rmSync(this.scratch, { recursive: true, force: true });
  }
}

/** A long-running agentmail (web, watch --json) whose stdout is read line by line as it comes. */
export class Running {
  readonly #child: Bun.Subprocess<"ignore", "pipe", "pipe">;
  readonly #reader: { read(): Promise<{ done: boolean; value?: Uint8Array }> };
  readonly #decoder = new TextDecoder();
  #buffer = "";
  readonly stderr: Promise<string>;
  /** What it has written to stderr so far (a test waits for a warning while it runs). */
  stderrNow = "";

  constructor(args: string[], env: Record<string, string>, cwd: string) {
    const child = Bun.spawn([BINARY, ...args], { env: patient(env), cwd, stdin: "ignore", stdout: "pipe", stderr: "pipe" });
    this.#child = child;
    this.#reader = child.stdout.getReader();
    this.stderr = (async () => {
      const decoder = new TextDecoder();
      for await (const chunk of chunksOf(child.stderr)) this.stderrNow += decoder.decode(chunk, { stream: true });
      return this.stderrNow;
    })();
  }

  /** The next line of stdout; fails saying it timed out (with what stderr said) rather than hang. Generous: a loaded machine is slow. */
  async line(ms = 60_000): Promise<string> {
    const deadline = Date.now() + ms;
    while (!this.#buffer.includes("\n")) {
      const left = deadline - Date.now();
      const chunk = await Promise.race([this.#reader.read(), Bun.sleep(Math.max(0, left)).then(() => null)]);
      if (chunk === null) throw new Error(`timed out after ${ms} ms waiting for a line of agentmail ${this.#child.pid}`);
      if (chunk.done) throw new Error(`agentmail exited (${await this.#child.exited}) before a line: ${await this.stderr}`);
      this.#buffer += this.#decoder.decode(chunk.value, { stream: true });
    }
    const end = this.#buffer.indexOf("\n");
    const line = this.#buffer.slice(0, end);
    this.#buffer = this.#buffer.slice(end + 1);
    return line;
  }

  /** Stops it as Ctrl-C would, and returns its exit code (a hang past 30 s is killed and is a failure). */
  async stop(): Promise<number | null> {
    this.#child.kill("SIGINT");
    const exited = await Promise.race([this.#child.exited, Bun.sleep(30_000).then(() => null)]);
    if (exited === null) {
      this.#child.kill(9);
      throw new Error(`timed out after 30 s waiting for agentmail ${this.#child.pid} to stop on SIGINT (the test killed it)`);
    }
    return exited;
  }
}

/** Polls until `check` gives a truthy value; a timeout says what it was waiting for (workflow.ts's waitFor). */
export const waitUntil = <T>(what: string, check: () => T | Promise<T>, ms = 60_000): Promise<NonNullable<T>> => waitFor(what, check, ms);

export interface RoomsInProcess {
  /** This test's repository and its file store. */
  readonly repo: ReturnType<typeof tempRepo>;
  readonly store: FileStore;
  /** Opens a room on this test's store; it is closed after the test. */
  open(options: RoomOptions): Promise<Room>;
}

/**
 * The views in process: a fresh repository and file store for each test, and every room opened on it closed after.
 * Registers its hooks where it is called; the parts are read through the returned object once they have run.
 */
export function roomsInProcess(): RoomsInProcess {
  let rooms: Room[] = [];
  const world = {
    open: async (options: RoomOptions) => {
      const room = await Room.open(world.store, options);
      rooms.push(room);
      return room;
    },
  } as { -readonly [K in keyof RoomsInProcess]: RoomsInProcess[K] };
  beforeEach(() => {
    world.repo = tempRepo();
    world.store = new FileStore(world.repo.mailDir);
    rooms = [];
  });
  afterEach(() => {
    for (const room of rooms) room.close();
    world.repo.remove();
  });
  return world;
}
