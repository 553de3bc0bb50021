/**
 * A private redis-server for tests and benchmarks: its own temp dir holding its unix socket, AOF and log, and, when
 * asked, a TCP port on 127.0.0.1 picked free. AOF with `appendfsync always` by default, so what the server
 * acknowledged survives a kill. Only servers started here are ever stopped. A missing redis-server fails the
 * caller with how to install it; it is never skipped.
 */
import { RedisClient } from "bun";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

const INSTALL_HINT = "redis-server is not installed; run: apt-get install -y redis-server";

function redisServerBinary(): string {
  const binary = Bun.which("redis-server");
  if (!binary) throw new Error(INSTALL_HINT);
  return binary;
}

export interface RedisServerOptions {
  /** Also listen on TCP 127.0.0.1 (a free port). */
  tcp?: boolean;
  /** requirepass: every client must give it. */
  password?: string;
  appendfsync?: "always" | "everysec" | "no";
  /** More arguments for redis-server, asked for at every launch (a replica's --replicaof, which may change). */
  args?: () => string[];
}

function freePort(): number {
  const listener = Bun.listen({ hostname: "127.0.0.1", port: 0, socket: { data() {} } });
  const port = listener.port;
  listener.stop(true);
  return port;
}

const sleep = (ms: number) => new Promise((done) => setTimeout(done, ms));

export class RedisServer {
  readonly dir: string;
  readonly socket: string;
  readonly port: number;
  readonly options: RedisServerOptions;
  #process: ReturnType<typeof Bun.spawn> | null = null;

  private constructor(dir: string, port: number, options: RedisServerOptions) {
    this.dir = dir;
    this.socket = join(dir, "redis.sock");
    this.port = port;
    this.options = options;
  }

  static async start(options: RedisServerOptions = {}): Promise<RedisServer> {
    redisServerBinary();
    const dir = mkdtempSync(join(tmpdir(), "agentmail-redis-"));
    for (let attempt = 0; ; attempt++) {
      const server = new RedisServer(dir, options.tcp ? freePort() : 0, options);
      try {
        await server.launch();
        return server;
      } catch (error) {
        // Another process may have taken the free port between the probe and the bind.
        if (!options.tcp || attempt >= 3) {
          rmSync(dir, { recursive: true, force: true });
          throw error;
        }
      }
    }
  }

  /** The unix socket URL, with the password when the server has one (then in the form Bun's client accepts too). */
  get url(): string {
    return `redis+unix://${this.options.password ? `:${encodeURIComponent(this.options.password)}@localhost` : ""}${this.socket}`;
  }

  get tcpUrl(): string {
    if (!this.port) throw new Error("this server was started without TCP");
    return `redis://${this.options.password ? `:${encodeURIComponent(this.options.password)}@` : ""}127.0.0.1:${this.port}`;
  }

  get running(): boolean {
    return this.#process !== null;
  }

  /** The server's process id while it runs (what a test freezes or kills). */
  get pid(): number | null {
    return this.#process?.pid ?? null;
  }

  /** Starts the server on this dir (again after stop or kill: the AOF there is loaded back). */
  async launch(): Promise<void> {
    const args = [
      redisServerBinary(),
      "--port",
      String(this.port),
      "--bind",
      "127.0.0.1",
      "--unixsocket",
      this.socket,
      "--unixsocketperm",
      "700",
      "--dir",
      this.dir,
      "--appendonly",
      "yes",
      "--appendfsync",
      this.options.appendfsync ?? "always",
      "--save",
      "",
      "--daemonize",
      "no",
      "--logfile",
      join(this.dir, "redis.log"),
    ];
    if (this.options.password) args.push("--requirepass", this.options.password, "--masterauth", this.options.password);
    if (this.options.args) args.push(...this.options.args());
    this.#process = Bun.spawn(args, { stdin: "ignore", stdout: "ignore", stderr: "ignore" });
    // Generous: a loaded machine starts it slowly; one that answers is used at once.
    const deadline = Date.now() + 60_000;
    let why = "it exited";
    for (;;) {
      if (this.#process.exitCode !== null) break;
      if (existsSync(this.socket) && (await this.#answers())) return;
      if (Date.now() > deadline) {
        why = "timed out after 60 s waiting for it to answer";
        break;
      }
      await sleep(10);
    }
    const log = existsSync(join(this.dir, "redis.log")) ? readFileSync(join(this.dir, "redis.log"), "utf8").slice(-2000) : "";
    await this.kill();
    throw new Error(`redis-server did not start in ${this.dir} (${why}):\n${log}`);
  }

  async #answers(): Promise<boolean> {
    const client = new RedisClient(this.url, { autoReconnect: false, maxRetries: 0, connectionTimeout: 500 });
    try {
      return (await client.send("PING", [])) === "PONG";
    } catch {
      return false;
    } finally {
      client.close();
    }
  }

  /**
   * How many clients the server holds in a blocking command: a store's wait blocks in XREAD (store/redis/bells.ts),
   * and only after its look, so a count up by one says a waiter really waits.
   */
  async blockedClients(): Promise<number> {
    const client = new RedisClient(this.url, { autoReconnect: false, maxRetries: 0 });
    try {
      const info = String(await client.send("INFO", ["clients"]));
      return Number(/^blocked_clients:(\d+)/m.exec(info)?.[1] ?? Number.NaN);
    } finally {
      client.close();
    }
  }

  async #signal(signal: "SIGTERM" | "SIGKILL"): Promise<void> {
    const child = this.#process;
    if (!child) return;
    this.#process = null;
    child.kill("SIGCONT");
    child.kill(signal);
    await child.exited;
    rmSync(this.socket, { force: true });
  }

  /** Freezes the server (SIGSTOP): it keeps its connections and answers nothing until thawed. */
  freeze(): void {
    this.#process?.kill("SIGSTOP");
  }

  thaw(): void {
    this.#process?.kill("SIGCONT");
  }

  /** A clean shutdown (SIGTERM). */
  stop(): Promise<void> {
    return this.#signal("SIGTERM");
  }

  /** A crash (SIGKILL): only what the AOF holds survives. */
  kill(): Promise<void> {
    return this.#signal("SIGKILL");
  }

  async restart(): Promise<void> {
    await this.kill();
    await this.launch();
  }

  /** Stops the server and removes its dir. */
  async remove(): Promise<void> {
    await this.kill();
    rmSync(this.dir, { recursive: true, force: true });
  }
}
