/**
 * A private Redis Sentinel deployment for tests and benchmarks, as production runs one: a primary and two replicas
 * (each a redis-server with AOF, `appendfsync always`, on a TCP port of 127.0.0.1 picked free) watched by three
 * sentinels (`redis-server <conf> --sentinel`, quorum 2). Everything lives in temp dirs that `remove` deletes; only
 * processes started here are ever signalled. A missing redis-server fails the caller with how to install it.
 *
 * Sentinel decides on its own clock: the helpers wait for conditions (the primary the sentinels name changes, a
 * replica is online again), never for a fixed time, with bounds generous enough for a loaded machine, where a
 * sentinel can enter TILT mode and do nothing for 30 s.
 */
import { RedisClient } from "bun";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { RedisServer } from "./redis-server.ts";
import { waitFor } from "./workflow.ts";

export const PRIMARY_NAME = "agentmail";
/** How long a sentinel waits for an unanswering primary before it calls it down. */
const DOWN_AFTER_MS = 1_000;
const FAILOVER_TIMEOUT_MS = 5_000;
/** A failover on a loaded 2-core machine: TILT alone pauses Sentinel for 30 s. */
export const FAILOVER_BOUND_MS = 180_000;
/**
 * URL parameters for a test of what is delivered, not of the timeouts: on a machine loaded by other test runs, a
 * replica fsyncing on a busy disk can take seconds to acknowledge, and Sentinel's TILT delays a failover past 30 s.
 */
export const PATIENT = `replica-timeout=60000&failover-wait=${FAILOVER_BOUND_MS}`;

function freePort(): number {
  const listener = Bun.listen({ hostname: "127.0.0.1", port: 0, socket: { data() {} } });
  const port = listener.port;
  listener.stop(true);
  return port;
}

async function ask(port: number, command: string, args: string[], password?: string): Promise<any> {
  const credentials = password ? `:${encodeURIComponent(password)}@` : "";
  const client = new RedisClient(`redis://${credentials}127.0.0.1:${port}`, {
    autoReconnect: false,
    maxRetries: 0,
    connectionTimeout: 2_000,
  });
  try {
    return await client.send(command, args);
  } finally {
    client.close();
  }
}

/** `field:value` lines of an INFO section. */
function infoFields(text: string): Map<string, string> {
  const fields = new Map<string, string>();
  for (const line of text.split(/\r?\n/)) {
    const colon = line.indexOf(":");
    if (colon > 0) fields.set(line.slice(0, colon), line.slice(colon + 1));
  }
  return fields;
}

class SentinelProcess {
  readonly port: number;
  readonly #conf: string;
  readonly #log: string;
  #process: ReturnType<typeof Bun.spawn> | null = null;

  constructor(dir: string, index: number, primaryPort: number, password: string | undefined) {
    this.port = freePort();
    this.#conf = join(dir, `sentinel-${index}.conf`);
    this.#log = join(dir, `sentinel-${index}.log`);
    const lines = [
      `port ${this.port}`,
      "bind 127.0.0.1",
      "daemonize no",
      `dir ${dir}`,
      `logfile ${this.#log}`,
      `sentinel monitor ${PRIMARY_NAME} 127.0.0.1 ${primaryPort} 2`,
      `sentinel down-after-milliseconds ${PRIMARY_NAME} ${DOWN_AFTER_MS}`,
      `sentinel failover-timeout ${PRIMARY_NAME} ${FAILOVER_TIMEOUT_MS}`,
      `sentinel parallel-syncs ${PRIMARY_NAME} 2`,
    ];
    if (password) lines.push(`sentinel auth-pass ${PRIMARY_NAME} ${password}`);
    writeFileSync(this.#conf, `${lines.join("\n")}\n`);
  }

  launch(): void {
    this.#process = Bun.spawn(["redis-server", this.#conf, "--sentinel"], { stdin: "ignore", stdout: "ignore", stderr: "ignore" });
  }

  get log(): string {
    return existsSync(this.#log) ? readFileSync(this.#log, "utf8") : "";
  }

  ask(command: string, args: string[]): Promise<any> {
    return ask(this.port, command, args);
  }

  async kill(): Promise<void> {
    const child = this.#process;
    if (!child) return;
    this.#process = null;
    child.kill("SIGCONT");
    child.kill("SIGKILL");
    await child.exited;
  }
}

export interface SentinelClusterOptions {
  /** requirepass (and masterauth) of the data nodes; the sentinels get it as auth-pass. */
  password?: string;
}

export class SentinelCluster {
  readonly dir: string;
  /** The data nodes: the first starts as the primary. */
  readonly nodes: RedisServer[];
  readonly sentinels: SentinelProcess[];
  readonly #password: string | undefined;

  private constructor(dir: string, nodes: RedisServer[], sentinels: SentinelProcess[], password: string | undefined) {
    this.dir = dir;
    this.nodes = nodes;
    this.sentinels = sentinels;
    this.#password = password;
  }

  /** Starts the primary, its two replicas and the three sentinels, and waits until the sentinels see all of it. */
  static async start(options: SentinelClusterOptions = {}): Promise<SentinelCluster> {
    const dir = mkdtempSync(join(tmpdir(), "agentmail-sentinel-"));
    const nodes: RedisServer[] = [];
    const sentinels: SentinelProcess[] = [];
    const cluster = new SentinelCluster(dir, nodes, sentinels, options.password);
    const primaryPort = () => nodes[0]!.port;
    try {
      // Each node, whenever it starts, follows the primary the sentinels named last (the first node at first): a node
      // that restarts after a failover comes back as a replica at once, as the sentinels would make it anyway.
      const started = (self: () => RedisServer | undefined) =>
        RedisServer.start({ tcp: true, password: options.password, args: () => cluster.#follow(self()) });
      let primary: RedisServer | undefined;
      primary = await started(() => primary);
      nodes.push(primary);
      for (let i = 0; i < 2; i++) {
        let replica: RedisServer | undefined;
        replica = await started(() => replica);
        nodes.push(replica);
      }
      for (let i = 0; i < 3; i++) sentinels.push(new SentinelProcess(dir, i, primaryPort(), options.password));
      for (const sentinel of sentinels) sentinel.launch();
      await cluster.waitHealthy(nodes[0]);
      return cluster;
    } catch (error) {
      await cluster.remove();
      throw error;
    }
  }

  /** The primary the sentinels named last (what a node that restarts follows). */
  #primaryPortNow: number | null = null;

  #follow(self: RedisServer | undefined): string[] {
    const port = this.#primaryPortNow ?? this.nodes[0]?.port;
    return port === undefined || self?.port === port ? [] : ["--replicaof", "127.0.0.1", String(port)];
  }

  /** The URL of the deployment, with these parameters (`replicas=1&…`). */
  url(params = ""): string {
    const credentials = this.#password ? `:${encodeURIComponent(this.#password)}@` : "";
    const hosts = this.sentinels.map((sentinel) => `127.0.0.1:${sentinel.port}`).join(",");
    return `redis+sentinel://${credentials}${hosts}/${PRIMARY_NAME}${params ? `?${params}` : ""}`;
  }

  /** The data node on this port. */
  node(port: number): RedisServer {
    const node = this.nodes.find((each) => each.port === port);
    if (!node) throw new Error(`no data node on port ${port}`);
    return node;
  }

  /** What each sentinel answers for the primary's address (`null` for one that does not answer). */
  async named(): Promise<(number | null)[]> {
    return Promise.all(
      this.sentinels.map(async (sentinel) => {
        try {
          const reply = (await sentinel.ask("SENTINEL", ["GET-MASTER-ADDR-BY-NAME", PRIMARY_NAME])) as [string, string] | null;
          return reply ? Number(reply[1]) : null;
        } catch {
          return null;
        }
      }),
    );
  }

  /** The primary a majority of sentinels names. */
  async primary(): Promise<RedisServer> {
    const port = await waitFor("a majority of sentinels to name one primary", async () => {
      const named = (await this.named()).filter((each): each is number => each !== null);
      return named.find((port) => named.filter((other) => other === port).length >= 2) ?? null;
    });
    this.#primaryPortNow = port;
    return this.node(port);
  }

  /** Waits until a majority of sentinels names a primary other than `old`; returns it. */
  async promotedOver(old: RedisServer): Promise<RedisServer> {
    const port = await waitFor(
      () => `the sentinels to promote a replica over ${old.port} (they name ${this.#lastNamed}):\n${this.#logTails()}`,
      async () => {
        const named = await this.named();
        this.#lastNamed = named.join(", ");
        const others = named.filter((each): each is number => each !== null && each !== old.port);
        return others.find((port) => others.filter((other) => other === port).length >= 2) ?? null;
      },
      FAILOVER_BOUND_MS,
    );
    this.#primaryPortNow = port;
    return this.node(port);
  }

  #lastNamed = "";

  #logTails(): string {
    return this.sentinels.map((sentinel, i) => `sentinel ${i}: ${sentinel.log.split("\n").slice(-8).join("\n  ")}`).join("\n");
  }

  /** INFO replication of a data node, as fields. */
  async replication(node: RedisServer): Promise<Map<string, string>> {
    return infoFields(String(await ask(node.port, "INFO", ["replication"], this.#password)));
  }

  /**
   * Waits until the deployment is whole again: every data node runs, the primary (`expected`, when given) has both
   * replicas online and caught up, and every sentinel names it and knows both replicas and the two other sentinels.
   */
  async waitHealthy(expected?: RedisServer): Promise<RedisServer> {
    let state = "";
    await waitFor(
      () => `the Sentinel deployment to be whole (${state}):\n${this.#logTails()}`,
      async () => {
        const named = await this.named();
        const port = named[0];
        if (port === null || port === undefined || named.some((other) => other !== port)) {
          state = `sentinels name ${named.join(", ")}`;
          return false;
        }
        if (expected && port !== expected.port) {
          state = `sentinels name ${port}, not ${expected.port}`;
          return false;
        }
        this.#primaryPortNow = port;
        const fields = await this.replication(this.node(port)).catch(() => new Map<string, string>());
        const offset = fields.get("master_repl_offset");
        const online = [0, 1].filter((i) => {
          const replica = fields.get(`slave${i}`) ?? "";
          return replica.includes("state=online") && offset !== undefined && replica.includes(`offset=${offset},`);
        });
        if (fields.get("role") !== "master" || online.length < 2) {
          state = `primary ${port}: role ${fields.get("role")}, ${online.length} replicas online and caught up`;
          return false;
        }
        for (const sentinel of this.sentinels) {
          const master = (await sentinel.ask("SENTINEL", ["MASTER", PRIMARY_NAME]).catch(() => null)) as Record<string, string> | null;
          const replicas = (await sentinel.ask("SENTINEL", ["REPLICAS", PRIMARY_NAME]).catch(() => [])) as Record<string, string>[];
          const usable = replicas.filter((replica) => !/s_down|o_down|disconnected/.test(String(replica.flags)));
          if (!master || String(master["num-other-sentinels"]) !== "2" || usable.length < 2 || /down|failover/.test(String(master.flags))) {
            state = `sentinel ${sentinel.port}: ${master?.["num-other-sentinels"]} other sentinels, ${usable.length} usable replicas, flags ${master?.flags}`;
            return false;
          }
        }
        return true;
      },
      FAILOVER_BOUND_MS,
      100,
    );
    return this.node(this.#primaryPortNow!);
  }

  /**
   * Makes the deployment whole whatever a test left (a node killed or frozen by a test that failed midway): every node
   * thawed and running, then waitHealthy. Cheap when it is whole already.
   */
  async restore(): Promise<RedisServer> {
    for (const node of this.nodes) {
      node.thaw();
      if (!node.running) await node.launch();
    }
    return this.waitHealthy();
  }

  /** The replicas of the current primary. */
  async replicas(): Promise<RedisServer[]> {
    const primary = await this.primary();
    return this.nodes.filter((node) => node !== primary);
  }

  /** Stops everything and deletes the dirs. */
  async remove(): Promise<void> {
    for (const sentinel of this.sentinels) await sentinel.kill();
    for (const node of this.nodes) await node.remove();
    rmSync(this.dir, { recursive: true, force: true });
  }
}
