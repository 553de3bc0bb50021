/**
 * What the tests of the person's views (watch, web) share: agents in a private tmux server over one repository, on
 * the file store or on a private redis-server (every process then gets AGENTMAIL_URL and one namespace), and the
 * person, who runs agentmail outside tmux as AGENTMAIL_HUMAN. Everything is started here and removed by `remove`.
 */
import { afterEach, beforeEach } from "bun:test";
import { mkdtempSync, realpathSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type AgentFacts, Room, type RoomOptions, UNKNOWN_PANE } from "../../src/room/room.ts";
import { FileStore } from "../../src/store/file-store.ts";
import { am, BINARY, patient, type Result } from "./e2e.ts";
import { RedisServer } from "./redis-server.ts";
import { tempRepo } from "./repo.ts";
import { outsideTmuxEnv, TmuxServer } from "./tmux-server.ts";
import { waitFor } from "./workflow.ts";

export type Engine = "file" | "redis";

/** A room's facts when nothing outside the store is known (no tmux, no mailman, no claims), or what `extra` says. */
export const roomFacts =
  (extra: Partial<AgentFacts> = {}) =>
  async (): Promise<AgentFacts> => ({ pane: () => UNKNOWN_PANE, reach: () => "pull", claims: [], mailman: null, ...extra });

export const HUMAN = "ana";

let worlds = 0;

export class RoomWorld {
  readonly scratch: string;
  readonly repo: ReturnType<typeof tempRepo>;
  readonly tmux: TmuxServer;
  readonly redis: RedisServer | null;
  readonly #store: Record<string, string>;

  private constructor(engine: Engine, agents: string[], redis: RedisServer | null) {
    this.scratch = realpathSync(mkdtempSync(join(tmpdir(), "agentmail-room-")));
    this.repo = tempRepo();
    this.tmux = TmuxServer.start(agents, this.repo.dir);
    this.redis = redis;
    this.#store = engine === "redis" ? { AGENTMAIL_URL: redis!.url, AGENTMAIL_NAMESPACE: `room-${process.pid}-${++worlds}` } : {};
  }

  /** Agents in their windows, each registered (`status ready`) as its SessionStart hook would. */
  static async start(engine: Engine, agents: string[]): Promise<RoomWorld> {
    const redis = engine === "redis" ? await RedisServer.start() : null;
    const world = new RoomWorld(engine, agents, redis);
    for (const agent of agents) {
      const result = await world.am(agent, ["status", "ready"]);
      if (result.code !== 0) throw new Error(`${agent} could not register: ${result.stderr}`);
    }
    return world;
  }

  /** The environment of a process in an agent's pane. */
  env(agent: string, extra: Record<string, string> = {}): Record<string, string> {
    return { ...this.tmux.agent(agent).env, ...this.#store, NO_COLOR: "1", ...extra };
  }

  /** The person's environment: outside tmux, named by AGENTMAIL_HUMAN. */
  humanEnv(extra: Record<string, string> = {}): Record<string, string> {
    return outsideTmuxEnv({ ...this.#store, AGENTMAIL_HUMAN: HUMAN, ...extra });
  }

  /** A shell command line that runs the binary with the person's store settings (for a tmux window). */
  humanCommand(args: string): string {
    const store = Object.entries(this.#store).map(([key, value]) => `${key}='${value}'`);
    return ["env", "-u", "TMUX", "-u", "TMUX_PANE", ...store, `AGENTMAIL_HUMAN=${HUMAN}`, BINARY, args].join(" ");
  }

  /** Types a command line running the binary into an agent's pane, as a person (or an agent CLI's shell tool) would. */
  typeIn(agent: string, args: string): void {
    const store = Object.entries(this.#store).map(([key, value]) => `${key}='${value}'`);
    this.tmux.run(["send-keys", "-t", this.tmux.agent(agent).paneId, "-l", [...store, BINARY, args].join(" ")]);
    this.tmux.run(["send-keys", "-t", this.tmux.agent(agent).paneId, "Enter"]);
  }

  am(agent: string, args: string[], timeoutMs?: number): Promise<Result> {
    return am(args, { env: this.env(agent), cwd: this.repo.dir, timeoutMs });
  }

  async remove(): Promise<void> {
    this.tmux.stop();
    await this.redis?.remove();
    this.repo.remove();
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

  constructor(args: string[], env: Record<string, string>, cwd: string) {
    this.#child = Bun.spawn([BINARY, ...args], { env: patient(env), cwd, stdin: "ignore", stdout: "pipe", stderr: "pipe" });
    this.#reader = this.#child.stdout.getReader();
    this.stderr = new Response(this.#child.stderr).text();
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
