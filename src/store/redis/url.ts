import { AgentmailError } from "../../mail/errors.ts";
import { shellQuote } from "../../mail/next-steps.ts";

/**
 * Where the mail server is, parsed from AGENTMAIL_URL. Bun's client accepts redis, valkey, rediss, valkeys,
 * redis+tls, redis+unix and redis+tls+unix, takes the database of a socket only from SELECT, and rejects a
 * password on a socket URL unless a host is written before the path; users type redis-py's `unix:///path?db=2`
 * and `redis+unix://:pw@/path` as well. So the URL is parsed here, and Bun is handed one canonical form of it.
 * A Sentinel URL (`redis+sentinel://host1,host2,host3/<primary>`) names no server: the sentinels are asked which
 * one is the primary (sentinel.ts), and `host`/`port` are filled in for each connection.
 */
export interface ServerAddress {
  transport: "tcp" | "unix";
  tls: boolean;
  /** TCP: host name or address (IPv6 without brackets). */
  host: string;
  port: number;
  /** Unix: the socket's path. */
  socket: string;
  user: string;
  /** Never printed: `display` and every message built from this address leave it out. */
  password: string;
  db: number;
  /** The address without the password, for every message a user or a log sees. */
  display: string;
  /** The sentinels to ask for the primary, or null for a server named directly. */
  sentinel: SentinelSet | null;
  /** How many replicas must acknowledge a write before it counts as done (`replicas=`; WAIT). */
  replicas: number;
  /** How long a write waits for those acknowledgements (`replica-timeout=`, ms). */
  replicaTimeoutMs: number;
  /**
   * How long a command keeps trying after it lost the server mid-way (`failover-wait=`, ms): through a restart, or
   * until the sentinels name a new primary. Null: the command's timeout (AGENTMAIL_REDIS_TIMEOUT).
   */
  failoverWaitMs: number | null;
}

/** A Sentinel deployment: where its sentinels listen, the primary's name there, and the sentinels' own credentials. */
export interface SentinelSet {
  nodes: { host: string; port: number }[];
  /** The name the sentinels monitor the primary under (`sentinel monitor <name> …`). */
  primary: string;
  user: string;
  /** Never printed, as the server's password. */
  password: string;
}

/**
 * `replicas=` when the URL does not say. A Sentinel deployment exists to survive losing its primary, and a write only
 * the primary holds is lost when a replica without it is promoted: so one replica's acknowledgement, which the
 * standard layout (a primary and two replicas) still gives with any one data node down. A single server has no
 * replica to wait for.
 */
export const SENTINEL_REPLICAS = 1;
/** `replica-timeout=` when the URL does not say: replicas on a working network answer in well under a millisecond. */
export const DEFAULT_REPLICA_TIMEOUT_MS = 2_000;
/** `failover-wait=` for a Sentinel URL: Sentinel's own failover (down-after + election + promotion) takes seconds. */
export const SENTINEL_FAILOVER_WAIT_MS = 30_000;
const MAX_MS = 600_000;

const PLAIN = ["redis", "valkey"];
const TLS = ["rediss", "valkeys", "redis+tls", "valkey+tls"];
const SOCKET = ["redis+unix", "valkey+unix", "unix", "redis+socket", "redis-socket"];
const TLS_SOCKET = ["redis+tls+unix", "rediss+unix", "valkey+tls+unix", "valkeys+unix"];
const SENTINEL = ["redis+sentinel", "valkey+sentinel"];
const TLS_SENTINEL = ["rediss+sentinel", "valkeys+sentinel", "redis+sentinel+tls"];
const SENTINEL_PORT = 26379;

const URL_FORMS =
  "redis://[user:password@]host[:port][/db], rediss:// for TLS, valkey:// and valkeys:// alike, " +
  "redis+unix://[user:password@]/path/to/socket[?db=N] (unix:// also works), " +
  "or redis+sentinel://[user:password@]host1:26379,host2:26379,host3:26379/<primary-name>[?db=N] (rediss+sentinel:// for TLS)";

function badUrl(why: string): AgentmailError {
  const how = `write it as ${URL_FORMS}, with special characters in the password percent-encoded`;
  return new AgentmailError("usage", `AGENTMAIL_URL ${why}; ${how}`);
}

function decode(part: string, what: string): string {
  try {
    return decodeURIComponent(part);
  } catch {
    throw badUrl(`has a malformed percent-escape in its ${what}`);
  }
}

function parseDb(text: string | null | undefined): number {
  if (text === null || text === undefined || text === "") return 0;
  // The text is not echoed: a password with a raw `/` (`redis://:pa/ss@host`) puts part of itself here.
  if (!/^\d{1,5}$/.test(text)) throw badUrl("names a database that is not a number (a raw / in the password ends the host part)");
  return Number(text);
}

/** A whole number from a query parameter, within bounds; the parameter's name says what it is. */
function parseSetting(query: URLSearchParams, name: string, fallback: number, max: number): number {
  const text = query.get(name);
  if (text === null || text === "") return fallback;
  const value = /^\d{1,7}$/.test(text) ? Number(text) : NaN;
  if (!(value >= 0 && value <= max))
    throw badUrl(`has ${name}=${/^[\w.-]{1,20}$/.test(text) ? text : "…"}, which is not a whole number from 0 to ${max}`);
  return value;
}

function parsePort(text: string): number {
  const port = /^\d{1,5}$/.test(text) ? Number(text) : NaN;
  // The text is not echoed: a password with a raw `/` puts part of itself here.
  if (!(port >= 1 && port <= 65535)) throw badUrl("has a port that is not a number from 1 to 65535");
  return port;
}

interface Parts {
  scheme: string;
  user: string;
  password: string;
  authority: string;
  path: string;
  query: URLSearchParams;
}

/**
 * scheme://[user[:password]@]authority[/path][?query]. The authority ends at the first `/`; within it the last `@`
 * ends the credentials, so a raw `@` in a password works (a raw `/` cannot).
 */
function split(url: string): Parts {
  const schemeEnd = url.indexOf("://");
  if (schemeEnd <= 0) throw badUrl("has no scheme");
  const scheme = url.slice(0, schemeEnd).toLowerCase();
  let rest = url.slice(schemeEnd + 3);
  const hash = rest.indexOf("#");
  if (hash !== -1) rest = rest.slice(0, hash);
  const queryStart = rest.indexOf("?");
  const query = new URLSearchParams(queryStart === -1 ? "" : rest.slice(queryStart + 1));
  if (queryStart !== -1) rest = rest.slice(0, queryStart);
  const pathStart = rest.indexOf("/");
  let authority = pathStart === -1 ? rest : rest.slice(0, pathStart);
  const path = pathStart === -1 ? "" : rest.slice(pathStart);
  let user = "";
  let password = "";
  const at = authority.lastIndexOf("@");
  if (at !== -1) {
    const credentials = authority.slice(0, at);
    authority = authority.slice(at + 1);
    const colon = credentials.indexOf(":");
    user = decode(colon === -1 ? credentials : credentials.slice(0, colon), "user name");
    password = colon === -1 ? "" : decode(credentials.slice(colon + 1), "password");
  }
  user = user || query.get("username") || query.get("user") || "";
  password = password || query.get("password") || "";
  return { scheme, user, password, authority, path, query };
}

function hostAndPort(authority: string, defaultPort = 6379): { host: string; port: number } {
  if (authority.startsWith("[")) {
    const close = authority.indexOf("]");
    if (close === -1) throw badUrl("has an IPv6 address without its closing ]");
    const after = authority.slice(close + 1);
    if (after !== "" && !after.startsWith(":")) throw badUrl("has something other than a port after its IPv6 address");
    return { host: authority.slice(1, close), port: after ? parsePort(after.slice(1)) : defaultPort };
  }
  const colon = authority.lastIndexOf(":");
  const host = colon === -1 ? authority : authority.slice(0, colon);
  if (host === "") throw badUrl("has no host");
  return { host: host.toLowerCase(), port: colon === -1 ? defaultPort : parsePort(authority.slice(colon + 1)) };
}

interface Settings {
  replicas: number;
  replicaTimeoutMs: number;
  failoverWaitMs: number | null;
}

/** The URL parameters that change what a write waits for, each checked; a Sentinel URL has its own defaults. */
function settingsOf(query: URLSearchParams, sentinel: boolean): Settings {
  const replicas = parseSetting(query, "replicas", sentinel ? SENTINEL_REPLICAS : 0, 100);
  const replicaTimeoutMs = parseSetting(query, "replica-timeout", DEFAULT_REPLICA_TIMEOUT_MS, MAX_MS);
  if (replicaTimeoutMs === 0) throw badUrl("has replica-timeout=0, which would wait for ever (WAIT's 0); give milliseconds, 1 or more");
  const given = query.get("failover-wait");
  const failoverWaitMs =
    given === null || given === "" ? (sentinel ? SENTINEL_FAILOVER_WAIT_MS : null) : parseSetting(query, "failover-wait", 0, MAX_MS);
  return { replicas, replicaTimeoutMs, failoverWaitMs };
}

/**
 * The settings a URL gave, as the display shows them: they change what a command does, so a URL copied from an error or
 * a pointer keeps them (the passwords are never in it).
 */
function shownSettings(query: URLSearchParams): string[] {
  const shown: string[] = [];
  for (const name of ["replicas", "replica-timeout", "failover-wait"]) {
    const value = query.get(name);
    if (value) shown.push(`${name}=${value}`);
  }
  const sentinelUser = query.get("sentinel-user");
  if (sentinelUser) shown.push(`sentinel-user=${encodeURIComponent(sentinelUser)}`);
  return shown;
}

function withQuery(base: string, params: string[]): string {
  return params.length === 0 ? base : `${base}?${params.join("&")}`;
}

/** `host[:port],host[:port],…/<primary>[/db]`: the sentinels and the primary's name. */
function parseSentinel(parts: Parts, tls: boolean): ServerAddress {
  const { scheme, user, password, query } = parts;
  if (parts.authority === "") throw badUrl("names no sentinel (a Sentinel URL is redis+sentinel://host1:26379,host2:26379/<primary-name>)");
  const nodes = parts.authority.split(",").map((node) => hostAndPort(node.trim(), SENTINEL_PORT));
  const [name = "", pathDb = "", ...rest] = parts.path.replace(/^\/+|\/+$/g, "").split("/");
  const primary = decode(name, "primary name");
  if (primary === "" || rest.length > 0 || !/^[\x21-\x7e]{1,200}$/.test(primary)) {
    throw badUrl(
      "names no primary after the sentinels (redis+sentinel://host1:26379,host2:26379/<primary-name>, the name of `sentinel monitor`)",
    );
  }
  const db = parseDb(pathDb || query.get("db"));
  const sentinel = { nodes, primary, user: query.get("sentinel-user") ?? "", password: query.get("sentinel-password") ?? "" };
  const shownNodes = nodes.map(({ host, port }) => `${host.includes(":") ? `[${host}]` : host}:${port}`).join(",");
  const params = [...(db ? [`db=${db}`] : []), ...shownSettings(query)];
  const display = withQuery(
    `${scheme}://${user ? `${encodeURIComponent(user)}@` : ""}${shownNodes}/${encodeURIComponent(primary)}`,
    params,
  );
  // host and port are the primary's, filled in for each connection from what the sentinels say.
  return { transport: "tcp", tls, host: "", port: 0, socket: "", user, password, db, display, sentinel, ...settingsOf(query, true) };
}

/** Parses AGENTMAIL_URL. A bare absolute path is a unix socket. Throws a usage error naming the accepted forms. */
export function parseServerUrl(input: string): ServerAddress {
  const url = input.trim();
  if (url === "") throw badUrl("is empty");
  if (url.startsWith("/")) return parseServerUrl(`unix://${url}`);
  const parts = split(url);
  const { scheme, user, password, query } = parts;
  if (SENTINEL.includes(scheme) || TLS_SENTINEL.includes(scheme)) return parseSentinel(parts, TLS_SENTINEL.includes(scheme));
  const isSocket = SOCKET.includes(scheme) || TLS_SOCKET.includes(scheme);
  if (!isSocket && !PLAIN.includes(scheme) && !TLS.includes(scheme)) throw badUrl(`has the unknown scheme "${scheme}://"`);
  const tls = TLS.includes(scheme) || TLS_SOCKET.includes(scheme);
  const settings = { sentinel: null, ...settingsOf(query, false) };
  if (isSocket) {
    const socket = decode(parts.path, "socket path");
    if (!socket.startsWith("/")) throw badUrl("names no socket path (a unix socket URL is redis+unix:///path/to/socket)");
    const db = parseDb(query.get("db"));
    const params = [...(db ? [`db=${db}`] : []), ...shownSettings(query)];
    const display = withQuery(`${scheme}://${user ? `${encodeURIComponent(user)}@` : ""}${parts.path}`, params);
    return { transport: "unix", tls, host: "", port: 0, socket, user, password, db, display, ...settings };
  }
  const { host, port } = hostAndPort(parts.authority);
  const pathDb = parts.path.replace(/^\/+|\/+$/g, "");
  const db = parseDb(pathDb || query.get("db"));
  const shownHost = host.includes(":") ? `[${host}]` : host;
  const display = withQuery(
    `${scheme}://${user ? `${encodeURIComponent(user)}@` : ""}${shownHost}:${port}${db ? `/${db}` : ""}`,
    shownSettings(query),
  );
  return { transport: "tcp", tls, host, port, socket: "", user, password, db, display, ...settings };
}

/**
 * The URL Bun's client is given. A socket's database is not in it (Bun ignores `?db=` there): the connection
 * selects it itself.
 */
export function clientUrl(address: ServerAddress): string {
  const credentials =
    address.user || address.password
      ? `${encodeURIComponent(address.user)}${address.password ? `:${encodeURIComponent(address.password)}` : ""}@`
      : "";
  if (address.transport === "unix") {
    return `${address.tls ? "redis+tls+unix" : "redis+unix"}://${credentials}localhost${encodeURI(address.socket)}`;
  }
  const host = address.host.includes(":") ? `[${address.host}]` : address.host;
  return `${address.tls ? "rediss" : "redis"}://${credentials}${host}:${address.port}/${address.db}`;
}

/**
 * Removes the password from text that did not come from us (a server's or the client's error message), in case
 * it was echoed there. Passwords shorter than 4 characters are not searched for: that would mangle every message
 * and protects nothing.
 */
export function redact(text: string, address: ServerAddress): string {
  const passwords = [address.password, address.sentinel?.password ?? ""];
  const secrets = passwords.flatMap((password) => [password, encodeURIComponent(password)]).filter((secret) => secret.length >= 4);
  let out = text;
  for (const secret of secrets) out = out.split(secret).join("***");
  return out;
}

/**
 * How redis-cli reaches this server, for a command agentmail suggests: the socket or host and port, TLS, the user
 * and the database. Never the password: redis-cli takes it from REDISCLI_AUTH.
 */
export function redisCliCommand(address: ServerAddress): string {
  const args =
    address.transport === "unix" ? ["-s", shellQuote(address.socket)] : ["-h", shellQuote(address.host), "-p", String(address.port)];
  if (address.tls) args.push("--tls");
  if (address.user) args.push("--user", shellQuote(address.user));
  if (address.db) args.push("-n", String(address.db));
  return `redis-cli ${args.join(" ")}`;
}
