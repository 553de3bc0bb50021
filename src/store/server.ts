/**
 * A store on a mail server (Redis), as `doctor` checks it: what the server says of itself (version, persistence) and
 * of the servers behind it (sentinels, replicas), and the error that says it cannot be reached. Engine-neutral terms,
 * so that nothing outside src/store/ imports the engine (store/open.ts openMailServer opens one).
 */
import { AgentmailError } from "../mail/errors.ts";
import type { Store } from "./store.ts";

/**
 * The store could not talk to the server: not running, refused, timed out, the credentials refused, or the
 * connection lost mid-command. Its message names the server without the password. Code "io", exit 1; a `--hook`
 * caller tells it apart from other failures by this class.
 */
export class MailServerUnreachable extends AgentmailError {
  /** A write went out and no answer came back: the server may have done it (a send then says "may have been stored"). */
  readonly maybeDone: boolean;

  constructor(display: string, reason: string, maybeDone = false) {
    super("io", `cannot reach the mail server at ${display}: ${reason}`);
    this.maybeDone = maybeDone;
  }
}

export interface ServerInfo {
  /** Agents registered in the namespace. */
  agents: number;
  version: string | null;
  appendonly: boolean | null;
  appendfsync: string | null;
}

/** What one sentinel says, for doctor. */
export interface SentinelView {
  sentinel: string;
  /** Why it could not be asked, or null. */
  error: string | null;
  /** The primary it names (`host:port`), or null when it knows none by that name. */
  primary: string | null;
  /** Its flags for the primary (`master`, `s_down`, `o_down`, `failover_in_progress`…). */
  flags: string | null;
  replicas: number | null;
  /** The other sentinels it knows: with itself, how many the set has as it sees it. */
  otherSentinels: number | null;
  quorum: number | null;
  /** In TILT mode (its clock jumped, usually a machine too loaded to run it): it acts on nothing for 30 s. */
  tilt: boolean | null;
}

export interface ReplicaView {
  /** `host:port`, as the primary knows it. */
  node: string;
  /** `online`, or a stage of syncing (`wait_bgsave`, `send_bulk`). */
  state: string;
  /** Bytes of the replication stream it has yet to acknowledge. */
  behindBytes: number;
  /** Seconds since it last acknowledged. */
  lagSeconds: number;
}

/** The servers behind a store: on a Sentinel URL what each sentinel says, the server reached, its replicas. */
export interface Topology {
  /** Every sentinel's view, or null for a server named directly. */
  sentinels: SentinelView[] | null;
  /** The name the sentinels know the primary by, or null. */
  primaryName: string | null;
  /** The server the store reaches (`host:port` or the socket), or null when none could be named. */
  server: string | null;
  /** Its role (`master`, `slave`), or null when INFO was refused or the server cannot be reached. */
  role: string | null;
  replicas: ReplicaView[];
  /** `replicas=`: how many must acknowledge each write. */
  wanted: number;
  replicaTimeoutMs: number;
}

/** A store on a mail server: a store of namespaces, which can say how its server is. */
export interface ServerStore extends Store {
  readonly namespace: string;
  /** The registered agents of the namespace, the server's version and persistence (a part INFO refuses is null). */
  serverInfo(): Promise<ServerInfo>;
  /** The sentinels' views, the server reached, its replicas; reported even when the server cannot be reached. */
  topology(): Promise<Topology>;
}
