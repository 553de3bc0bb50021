import { RedisClient } from "bun";
import { existsSync } from "node:fs";
import { AgentmailError } from "../../mail/errors.ts";
import { MailServerUnreachable } from "../server.ts";
import { pause, seconds, TIMED_OUT, within } from "./deadline.ts";
import { NoPrimary, nodeName, Sentinels } from "./sentinel.ts";
import { untrustedCertificate } from "./tls.ts";
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
 * A write the primary did, but fewer replicas than `replicas=` acknowledged in time (WAIT): it would be lost if the
 * primary failed before they caught up. The write is not taken back (it may already be read): the caller says so.
 */
export class ReplicasBehind extends AgentmailError {
  constructor(display: string, acknowledged: number, wanted: number, timeoutMs: number) {
    const replicas = `${wanted} replica${wanted === 1 ? "" : "s"}`;
    super(
      "io",
      `the primary of ${display} made the change, but ${acknowledged} of the ${replicas} it must reach (replicas=${wanted} in AGENTMAIL_URL) acknowledged it within ${seconds(timeoutMs)}, so a failover now could undo it; bring the replicas back, or lower replicas= in AGENTMAIL_URL`,
    );
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

/**
 * A Lua script, run by its SHA-1 and loaded by the first caller that finds the server without it. A `durable` one
 * changes mail (a send, a read mark, an archive, the lists): it counts as done only once `replicas=` replicas have it.
 * Every script may run again after a connection lost mid-way (connection.ts retries it): each that changes mail is
 * written so that a second run of a call that already took effect changes nothing (a message is stored once per id,
 * a mark is set once); a delivery record may get one event twice, which changes no message's state.
 */
export class Script {
  readonly source: string;
  readonly durable: boolean;
  #sha: string | null = null;

  constructor(source: string, { durable = false } = {}) {
    this.source = source;
    this.durable = durable;
  }

  get sha(): string {
    this.#sha ??= new Bun.CryptoHasher("sha1").update(this.source).digest("hex");
    return this.#sha;
  }
}

const TIMEOUT_HINT = "AGENTMAIL_REDIS_TIMEOUT sets how long to wait";
/** The first pause before trying again, doubled each time up to the most. */
const FIRST_RETRY_MS = 50;
const MOST_RETRY_MS = 1_000;
/**
 * With `replicas=0`, a connection to a Sentinel's primary unused this long asks the sentinels again before its next
 * command: the primary may have been frozen, replaced, and thawed meanwhile, still believing itself the primary until
 * the sentinels demote it, and what it took then would be lost. (With replicas, the WAIT after a write finds no
 * replica on such a primary, and the write goes to the new one: no question needed.)
 */
const IDLE_RECHECK_MS = 1_000;

interface ClientError {
  code?: string;
  message?: string;
}

/**
 * How one attempt failed, which decides whether to try again (Connection.#perform):
 * - server: the server answered with an error; final.
 * - final: another attempt cannot do better (credentials refused, no primary by that name, the store closed).
 * - redirect: not done; asking the sentinels again may lead to the primary (READONLY, LOADING, a ROLE that is not
 *   the primary's, a write on a primary the sentinels replaced).
 * - unconnected: no connection was made, so nothing was sent.
 * - lost: the connection broke after the command may have gone out.
 * - silent: no answer within the timeout.
 */
type FailureKind = "server" | "final" | "redirect" | "unconnected" | "lost" | "silent";

class Failure extends Error {
  readonly kind: FailureKind;
  readonly command: string;
  /** The client's error, for a server's reply. */
  readonly reply: ClientError | null;
  /** The command may have reached the server. */
  readonly maybeSent: boolean;
  /** The sentinels named no primary (rather than a primary failing). */
  readonly discovery: boolean;

  constructor(
    kind: FailureKind,
    reason: string,
    command: string,
    options: { reply?: ClientError; maybeSent?: boolean; discovery?: boolean } = {},
  ) {
    super(reason);
    this.kind = kind;
    this.command = command;
    this.reply = options.reply ?? null;
    this.maybeSent = options.maybeSent ?? false;
    this.discovery = options.discovery ?? false;
  }
}

/** One client to one server, and what is known of it. */
interface Link {
  client: RedisClient;
  /** `host:port`, or the socket's path. */
  node: string;
  /** The client connected: a command given to it from then on may have reached the server. */
  connected: boolean;
  /** The server answered once: a failure after that is a lost connection, not a failure to connect. */
  answered: boolean;
  /** A Sentinel's primary: settles once ROLE said it is the primary; every command waits for it too. */
  verified: Promise<void>;
  usedAt: number;
}

/** How the store reaches the server for one kind of use; a blocking read has its own (sibling). */
export interface ConnectionOptions {
  /**
   * A key a write retried after a lost connection sets, so that WAIT, which counts a connection's own writes, covers
   * what the server held before (a retried send finds its message there and writes nothing).
   */
  syncKey?: string;
}

/**
 * One connection to the mail server. Bun's client by default retries a refused connection for about 31 s and
 * queues commands meanwhile; here the client never retries on its own, and connecting and every command are
 * bounded by the timeout, so a server that is down, unreachable or frozen fails the command within it.
 *
 * A connection lost mid-command is opened again and the command tried again, for up to `failover-wait` (a single
 * server: the timeout; a Sentinel URL: 30 s), since every command the store sends may run twice without effect
 * (Script). On a Sentinel URL, the primary is the one the sentinels name (checked with ROLE), asked again after a
 * lost connection, a READONLY or LOADING reply, an -UNBLOCKED blocking read (the primary was demoted), a WAIT that
 * falls short, and (with `replicas=0`) before using a connection idle for a second. A server that cannot be reached at the first try
 * (a single server down, or no sentinel answering) fails at once. With `replicas=N`, a durable script is followed by
 * WAIT on the same connection.
 *
 * The password lives only in private fields (an inspected connection does not show it) and every error text is
 * redacted.
 */
export class Connection {
  readonly #address: ServerAddress;
  readonly #timeoutMs: number;
  readonly #options: ConnectionOptions;
  readonly #sentinels: Sentinels | null;
  /** The sentinels' clients are this connection's to close (a sibling shares them). */
  readonly #ownsSentinels: boolean;
  #link: Link | null = null;
  #ready: Promise<Link> | null = null;
  #closed = false;

  constructor(address: ServerAddress, timeoutMs: number, options: ConnectionOptions = {}, sentinels?: Sentinels | null) {
    this.#address = address;
    this.#timeoutMs = timeoutMs;
    this.#options = options;
    this.#ownsSentinels = sentinels === undefined;
    this.#sentinels =
      sentinels !== undefined ? sentinels : address.sentinel ? new Sentinels(address.sentinel, address.tls, timeoutMs) : null;
  }

  /** A second connection to the same server: a blocking read holds up every other command on its connection. */
  sibling(): Connection {
    return new Connection(this.#address, this.#timeoutMs, this.#options, this.#sentinels);
  }

  /** The sentinels of a Sentinel URL (doctor asks them), or null. */
  get sentinels(): Sentinels | null {
    return this.#sentinels;
  }

  /** The server this connection reaches now: the URL's, or the primary the sentinels name. */
  async server(): Promise<ServerAddress> {
    if (!this.#sentinels) return this.#address;
    const primary = await this.#sentinels.primary().catch((error: unknown) => {
      throw this.#unreachable(`no sentinel named the primary (${(error as Error).message})`);
    });
    return { ...this.#address, host: primary.host, port: primary.port };
  }

  #unreachable(reason: string, maybeDone = false): MailServerUnreachable {
    return new MailServerUnreachable(this.#address.display, redact(reason, this.#address), maybeDone);
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
   * TCP URL's database itself but ignores it on a socket, and no command may run in database 0 instead. A Sentinel's
   * primary is asked for first, and its ROLE is sent ahead of the first command (pipelined: no round trip more).
   */
  async #open(): Promise<Link> {
    let address = this.#address;
    if (this.#sentinels) {
      try {
        const primary = await this.#sentinels.primary();
        address = { ...address, host: primary.host, port: primary.port };
      } catch (error) {
        if (!(error instanceof NoPrimary)) throw error;
        const kind = error.misnamed ? "final" : "unconnected";
        throw new Failure(kind, `no sentinel named the primary (${error.message})`, "SENTINEL", { discovery: true });
      }
    }
    const client = new RedisClient(clientUrl(address), { autoReconnect: false, maxRetries: 0, connectionTimeout: this.#timeoutMs });
    const node = address.transport === "unix" ? address.socket : nodeName(address);
    const link: Link = { client, node, connected: false, answered: false, verified: Promise.resolve(), usedAt: Date.now() };
    client.onconnect = () => {
      link.connected = true;
    };
    this.#link = link;
    if (address.transport === "unix" && address.db !== 0) {
      try {
        await this.#exchange(link, "SELECT", [String(address.db)], 0);
      } catch (error) {
        if (!(error instanceof Failure) || error.kind !== "server") throw error;
        this.#drop(link);
        throw new Failure("final", `SELECT ${address.db} was refused (${error.message})`, "SELECT");
      }
    }
    if (this.#sentinels) {
      link.verified = this.#exchange(link, "ROLE", [], 0).then((role) => {
        if (Array.isArray(role) && role[0] === "master") return;
        this.#drop(link);
        const said = Array.isArray(role) ? String(role[0]) : String(role);
        throw new Failure("redirect", `${node}, which the sentinels named, is not the primary (its ROLE says ${said})`, "ROLE");
      });
      // Each command waits for it; a failure is theirs to report.
      link.verified.catch(() => {});
    }
    return link;
  }

  /** Closes a client that failed; the next command opens a new one. */
  #drop(link: Link): void {
    if (this.#link === link) {
      this.#link = null;
      this.#ready = null;
    }
    link.client.close();
  }

  /** Connects on first use, and again after a lost connection (and, on Sentinel, after a failover). */
  async #connected(): Promise<Link> {
    if (this.#closed) throw new Failure("final", "the connection is closed", "");
    const idle = this.#link;
    if (idle && this.#sentinels && this.#address.replicas === 0 && Date.now() - idle.usedAt > IDLE_RECHECK_MS) {
      idle.usedAt = Date.now();
      const named = await this.#sentinels.primary().catch(() => null);
      if (named && nodeName(named) !== idle.node) this.#drop(idle);
    }
    if (!this.#ready) {
      const opening = this.#open();
      this.#ready = opening;
      opening.catch(() => {
        if (this.#ready === opening) this.#ready = null;
      });
    }
    return this.#ready;
  }

  /** Which replies of the server mean "not here, ask again" rather than a refusal to report. */
  #serverFailureKind(message: string): FailureKind {
    if (message.startsWith("LOADING")) return "redirect";
    const moved = ["READONLY", "MASTERDOWN", "UNBLOCKED", "NOREPLICAS"].some((prefix) => message.startsWith(prefix));
    return moved && this.#sentinels ? "redirect" : "server";
  }

  /** One command on `link`, as the client answers it; every failure becomes a Failure that says what kind it is. */
  async #exchange(link: Link, name: string, args: string[], blockMs: number): Promise<any> {
    let reply: unknown;
    link.usedAt = Date.now();
    try {
      reply = await within(link.client.send(name, args), this.#timeoutMs + blockMs);
    } catch (error) {
      const failure = error as ClientError;
      if (failure.code === "ERR_REDIS_SERVER_ERROR") {
        link.answered = true;
        const message = failure.message ?? "";
        const kind = this.#serverFailureKind(message);
        if (kind === "redirect") this.#drop(link);
        throw new Failure(kind, message, name, { reply: failure });
      }
      this.#drop(link);
      if (this.#closed) throw new Failure("final", "the connection was closed", name);
      if (failure.code === "ERR_REDIS_AUTHENTICATION_FAILED") throw new Failure("final", this.#reason(failure), name);
      const untrusted = this.#address.tls ? untrustedCertificate(failure) : null;
      if (untrusted) throw new Failure("final", untrusted, name);
      if (!link.connected && !link.answered) throw new Failure("unconnected", this.#reason(failure), name);
      const reason = `the connection was lost (${failure.message ?? String(error)})`;
      throw new Failure("lost", reason, name, { maybeSent: true });
    }
    if (reply === TIMED_OUT) {
      this.#drop(link);
      const what = link.answered ? `no answer to ${name} within` : "no answer within";
      throw new Failure("silent", `${what} ${seconds(this.#timeoutMs)} (${TIMEOUT_HINT})`, name, { maybeSent: link.connected });
    }
    link.answered = true;
    link.usedAt = Date.now();
    return reply;
  }

  /** A command once the link is known to lead to the primary (ROLE, on Sentinel: pipelined with the command). */
  async #request(link: Link, name: string, args: string[], blockMs: number): Promise<any> {
    const [reply] = await Promise.all([this.#exchange(link, name, args, blockMs), link.verified]);
    return reply;
  }

  /**
   * Runs `work` on the connection, trying again on a new connection while that can help (see the class), pausing
   * 50 ms, then twice as long each time up to a second. What is left when it gives up is a MailServerUnreachable that
   * says whether a write may have been done.
   */
  async #perform<T>(work: (link: Link, retried: boolean) => Promise<T>): Promise<T> {
    let firstFailure: number | null = null;
    let delay = FIRST_RETRY_MS;
    let maybeDone = false;
    let interrupted = false;
    const budget = this.#address.failoverWaitMs ?? this.#timeoutMs;
    for (let attempt = 0; ; attempt++) {
      try {
        return await work(await this.#connected(), attempt > 0);
      } catch (error) {
        if (!(error instanceof Failure)) throw error;
        if (error.kind === "server") throw this.#serverError(error.reply ?? { message: error.message }, error.command);
        maybeDone ||= error.maybeSent;
        const retry = this.#worthRetrying(error, interrupted);
        interrupted ||= error.kind === "lost" || error.kind === "redirect" || (this.#sentinels !== null && !error.discovery);
        firstFailure ??= Date.now();
        const waited = Date.now() - firstFailure;
        if (!retry || waited + delay > budget) {
          const after =
            attempt > 0
              ? `; still so after trying again for ${seconds(Math.round(waited / 100) * 100)} (failover-wait in AGENTMAIL_URL sets how long)`
              : "";
          throw this.#unreachable(`${error.message}${after}`, maybeDone);
        }
        await pause(delay);
        delay = Math.min(delay * 2, MOST_RETRY_MS);
      }
    }
  }

  /**
   * Whether another attempt can help: never after a final failure; on a single server, after a connection lost
   * mid-way or a LOADING reply (a restart), and then also while it does not answer yet; on Sentinel, always but when
   * the very first attempt found no sentinel that names a primary.
   */
  #worthRetrying(failure: Failure, interrupted: boolean): boolean {
    if (this.#closed || failure.kind === "final") return false;
    if (failure.kind === "lost" || failure.kind === "redirect") return true;
    if (this.#sentinels) return interrupted || !failure.discovery;
    return interrupted;
  }

  /**
   * Sends one command. `blockMs` is how long the server itself may hold the reply (a blocking read); the timeout
   * runs on top of it.
   */
  command(name: string, args: string[], blockMs = 0): Promise<any> {
    return this.#perform((link) => this.#request(link, name, args, blockMs));
  }

  /** Runs a script by its hash, loading it when the server does not know it yet (a restart forgets scripts). */
  run(script: Script, keys: string[], args: string[]): Promise<any> {
    return this.#perform(async (link, retried) => {
      const reply = await this.#script(link, script, keys, args);
      if (script.durable && this.#address.replicas > 0) await this.#replicated(link, retried);
      return reply;
    });
  }

  async #script(link: Link, script: Script, keys: string[], args: string[]): Promise<any> {
    try {
      return await this.#request(link, "EVALSHA", [script.sha, String(keys.length), ...keys, ...args], 0);
    } catch (error) {
      if (!(error instanceof Failure && error.kind === "server" && error.message.startsWith("NOSCRIPT"))) throw error;
    }
    return this.#request(link, "EVAL", [script.source, String(keys.length), ...keys, ...args], 0);
  }

  /**
   * Waits for `replicas=` replicas to acknowledge this connection's writes (WAIT). Short of that, on Sentinel, a
   * primary the sentinels no longer name (frozen and replaced: what it took is lost when it is demoted) is left and
   * the write tried again on the new one; otherwise the write is on the primary only, and the caller is told.
   */
  async #replicated(link: Link, retried: boolean): Promise<void> {
    const { replicas, replicaTimeoutMs } = this.#address;
    // A retried script may have found its work done and written nothing; WAIT would then count no write of ours.
    if (retried && this.#options.syncKey) await this.#request(link, "SET", [this.#options.syncKey, String(Date.now())], 0);
    const acknowledged = Number(await this.#request(link, "WAIT", [String(replicas), String(replicaTimeoutMs)], replicaTimeoutMs));
    if (acknowledged >= replicas) return;
    if (this.#sentinels) {
      const named = await this.#sentinels.primary().catch(() => null);
      if (named && nodeName(named) !== link.node) {
        this.#drop(link);
        throw new Failure("redirect", `${link.node} is no longer the primary (the sentinels name ${nodeName(named)})`, "WAIT");
      }
    }
    throw new ReplicasBehind(this.#address.display, acknowledged, replicas, replicaTimeoutMs);
  }

  /** A server's error reply as an AgentmailError that says what to do; anything else is passed through. */
  #serverError(failure: ClientError, command: string): unknown {
    if (failure.message?.startsWith(ScriptRefusal.PREFIX)) return new ScriptRefusal(failure.message.slice(ScriptRefusal.PREFIX.length));
    const text = redact(failure.message ?? "", this.#address);
    const hint = text.startsWith("MISCONF")
      ? "the server cannot persist its data; fix its disk or persistence settings"
      : text.startsWith("READONLY")
        ? "AGENTMAIL_URL points at a read-only replica; point it at the primary (or at the sentinels: redis+sentinel://)"
        : text.startsWith("NOREPLICAS")
          ? "the primary refuses writes while too few replicas are connected (its min-replicas-to-write); bring them back"
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
    const link = this.#link;
    this.#link = null;
    this.#ready = null;
    link?.client.close();
    if (this.#ownsSentinels) this.#sentinels?.close();
  }
}
