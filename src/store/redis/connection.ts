import { RedisClient } from "bun";
import { existsSync } from "node:fs";
import { AgentmailError } from "../../mail/errors.ts";
import { clientUrl, redact, type ServerAddress } from "./url.ts";

/** How long a command may take to reach the server and be answered before the command fails: a CLI must not hang. */
export const DEFAULT_TIMEOUT_MS = 2_000;
const MAX_TIMEOUT_MS = 600_000;

/**
 * AGENTMAIL_REDIS_TIMEOUT: seconds (`2`, `0.5`, `2s`) or milliseconds (`500ms`). Unset means the default.
 */
export function parseTimeout(text: string | undefined): number {
  if (text === undefined || text.trim() === "") return DEFAULT_TIMEOUT_MS;
  const match = /^\s*(\d+(?:\.\d+)?)\s*(ms|s)?\s*$/i.exec(text);
  const ms = match ? Number(match[1]) * (match[2]?.toLowerCase() === "ms" ? 1 : 1000) : NaN;
  if (!(ms >= 1 && ms <= MAX_TIMEOUT_MS)) {
    const hint = "give seconds (2, 0.5, 2s) or milliseconds (500ms), at most 600 s";
    throw new AgentmailError("usage", `AGENTMAIL_REDIS_TIMEOUT is "${text}"; ${hint}`);
  }
  return Math.round(ms);
}

/**
 * The store could not talk to the server: not running, refused, timed out, the credentials refused, or the
 * connection lost mid-command. Its message names the server without the password. Code "io", exit 1; a `--hook`
 * caller tells it apart from other failures by this class.
 */
export class MailServerUnreachable extends AgentmailError {
  constructor(display: string, reason: string) {
    super("io", `cannot reach the mail server at ${display}: ${reason}`);
  }
}

/**
 * A script's own refusal, `redis.error_reply('AGENTMAIL_REFUSED <what>')` (the store's scripts refuse a store whose
 * mail moved): passed to the store as it is, which says what it means.
 */
export class ScriptRefusal extends Error {
  static readonly PREFIX = "AGENTMAIL_REFUSED ";
  readonly what: string;

  constructor(what: string) {
    super(what);
    this.what = what;
  }
}

/** A Lua script, run by its SHA-1 and loaded by the first caller that finds the server without it. */
export class Script {
  readonly source: string;
  #sha: string | null = null;

  constructor(source: string) {
    this.source = source;
  }

  get sha(): string {
    this.#sha ??= new Bun.CryptoHasher("sha1").update(this.source).digest("hex");
    return this.#sha;
  }
}

const TIMED_OUT = Symbol("timed out");
const TIMEOUT_HINT = "AGENTMAIL_REDIS_TIMEOUT sets how long to wait";

function within<T>(work: Promise<T>, ms: number): Promise<T | typeof TIMED_OUT> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const expiry = new Promise<typeof TIMED_OUT>((done) => {
    timer = setTimeout(() => done(TIMED_OUT), ms);
  });
  return Promise.race([work, expiry]).finally(() => clearTimeout(timer));
}

function seconds(ms: number): string {
  return ms % 1000 === 0 ? `${ms / 1000} s` : `${ms} ms`;
}

interface ClientError {
  code?: string;
  message?: string;
}

/**
 * One connection to the mail server. Bun's client by default retries a refused connection for about 31 s and
 * queues commands meanwhile; here the client never retries on its own, and connecting and every command are
 * bounded by the timeout, so a server that is down, unreachable or frozen fails the command within it. A lost
 * connection fails the command it was carrying; the next command opens a new one (a long-lived MCP server or
 * mailman outlives a server restart). The password lives only in private fields (an inspected connection does not
 * show it) and every error text is redacted.
 */
export class Connection {
  readonly #address: ServerAddress;
  readonly #timeoutMs: number;
  #client: RedisClient | null = null;
  #ready: Promise<RedisClient> | null = null;
  /** Clients that have answered once: a failure after that is a lost connection, not a failure to connect. */
  readonly #answered = new WeakSet<RedisClient>();
  #closed = false;

  constructor(address: ServerAddress, timeoutMs: number) {
    this.#address = address;
    this.#timeoutMs = timeoutMs;
  }

  /** A second connection to the same server: a blocking read holds up every other command on its connection. */
  sibling(): Connection {
    return new Connection(this.#address, this.#timeoutMs);
  }

  #unreachable(reason: string): MailServerUnreachable {
    return new MailServerUnreachable(this.#address.display, redact(reason, this.#address));
  }

  /** Why a connection failed, in words a user can act on. */
  #reason(error: ClientError): string {
    const text = error.message ?? String(error);
    if (error.code === "ERR_REDIS_AUTHENTICATION_FAILED") {
      return `the server refused to let us in (${text}); check the user and password in AGENTMAIL_URL`;
    }
    if (this.#address.transport === "unix" && !existsSync(this.#address.socket)) {
      return `there is no socket at ${this.#address.socket} (is redis-server running?)`;
    }
    if (error.code === "ERR_REDIS_CONNECTION_CLOSED") return "the connection was refused or closed (is redis-server running?)";
    return text;
  }

  /**
   * A new client, with no round trip of its own: its first command is the probe, and its failure says why (a refused
   * password, no socket, a refused connection). Only a database named on a socket costs a SELECT first: Bun selects a
   * TCP URL's database itself but ignores it on a socket, and no command may run in database 0 instead.
   */
  async #open(): Promise<RedisClient> {
    const client = new RedisClient(clientUrl(this.#address), {
      autoReconnect: false,
      maxRetries: 0,
      connectionTimeout: this.#timeoutMs,
    });
    this.#client = client;
    if (this.#address.transport === "unix" && this.#address.db !== 0) {
      try {
        await this.#request(client, "SELECT", [String(this.#address.db)], 0);
      } catch (error) {
        const failure = error as ClientError;
        if (failure.code !== "ERR_REDIS_SERVER_ERROR") throw error;
        this.#drop(client);
        throw this.#unreachable(`SELECT ${this.#address.db} was refused (${failure.message})`);
      }
    }
    return client;
  }

  /** Closes a client that failed; the next command opens a new one. */
  #drop(client: RedisClient): void {
    if (this.#client === client) {
      this.#client = null;
      this.#ready = null;
    }
    client.close();
  }

  /** Connects on first use, and again after a lost connection. */
  #connected(): Promise<RedisClient> {
    if (this.#closed) return Promise.reject(this.#unreachable("the connection is closed"));
    this.#ready ??= this.#open();
    return this.#ready;
  }

  /** One command on `client`; a server's error reply comes back as the client's RedisError, untranslated. */
  async #request(client: RedisClient, name: string, args: string[], blockMs: number): Promise<any> {
    let reply: unknown;
    try {
      reply = await within(client.send(name, args), this.#timeoutMs + blockMs);
    } catch (error) {
      const failure = error as ClientError;
      if (failure.code === "ERR_REDIS_SERVER_ERROR") {
        this.#answered.add(client);
        throw failure;
      }
      if (this.#closed) throw this.#unreachable("the connection was closed");
      this.#drop(client);
      if (!this.#answered.has(client)) throw this.#unreachable(this.#reason(failure));
      throw this.#unreachable(`the connection was lost (${failure.message ?? String(error)})`);
    }
    if (reply === TIMED_OUT) {
      this.#drop(client);
      const what = this.#answered.has(client) ? `no answer to ${name} within` : "no answer within";
      throw this.#unreachable(`${what} ${seconds(this.#timeoutMs)} (${TIMEOUT_HINT})`);
    }
    this.#answered.add(client);
    return reply;
  }

  async #send(name: string, args: string[], blockMs: number): Promise<any> {
    return this.#request(await this.#connected(), name, args, blockMs);
  }

  /**
   * Sends one command. `blockMs` is how long the server itself may hold the reply (a blocking read); the timeout
   * runs on top of it.
   */
  async command(name: string, args: string[], blockMs = 0): Promise<any> {
    try {
      return await this.#send(name, args, blockMs);
    } catch (error) {
      throw this.#serverError(error, name);
    }
  }

  /** Runs a script by its hash, loading it when the server does not know it yet (a restart forgets scripts). */
  async run(script: Script, keys: string[], args: string[]): Promise<any> {
    try {
      return await this.#send("EVALSHA", [script.sha, String(keys.length), ...keys, ...args], 0);
    } catch (error) {
      if (!(error as ClientError).message?.startsWith("NOSCRIPT")) throw this.#serverError(error, "EVALSHA");
    }
    try {
      return await this.#send("EVAL", [script.source, String(keys.length), ...keys, ...args], 0);
    } catch (error) {
      throw this.#serverError(error, "EVAL");
    }
  }

  /** A server's error reply as an AgentmailError that says what to do; anything else is passed through. */
  #serverError(error: unknown, command: string): unknown {
    const failure = error as ClientError;
    if (failure.code !== "ERR_REDIS_SERVER_ERROR") return error;
    if (failure.message?.startsWith(ScriptRefusal.PREFIX)) return new ScriptRefusal(failure.message.slice(ScriptRefusal.PREFIX.length));
    const text = redact(failure.message ?? "", this.#address);
    const hint = text.startsWith("MISCONF")
      ? "the server cannot persist its data; fix its disk or persistence settings"
      : text.startsWith("READONLY")
        ? "AGENTMAIL_URL points at a read-only replica; point it at the primary"
        : text.startsWith("NOPERM") || text.includes("can't run this command")
          ? "the user in AGENTMAIL_URL lacks a permission; grant it or use another user"
          : text.startsWith("OOM")
            ? "the server is out of memory; raise its maxmemory or clean up read mail"
            : "check the server's version (6.2 or newer) and its log";
    return new AgentmailError("io", `the mail server at ${this.#address.display} refused ${command}: ${text}; ${hint}`);
  }

  /** Final: later commands fail, a pending one is cut off. */
  close(): void {
    this.#closed = true;
    const client = this.#client;
    this.#client = null;
    this.#ready = null;
    client?.close();
  }
}
