import { AgentmailError } from "../../mail/errors.ts";
import { shellQuote } from "../../mail/next-steps.ts";

/**
 * Where the mail server is, parsed from AGENTMAIL_URL. Bun's client accepts redis, valkey, rediss, valkeys,
 * redis+tls, redis+unix and redis+tls+unix, takes the database of a socket only from SELECT, and rejects a
 * password on a socket URL unless a host is written before the path; users type redis-py's `unix:///path?db=2`
 * and `redis+unix://:pw@/path` as well. So the URL is parsed here, and Bun is handed one canonical form of it.
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
}

const PLAIN = ["redis", "valkey"];
const TLS = ["rediss", "valkeys", "redis+tls", "valkey+tls"];
const SOCKET = ["redis+unix", "valkey+unix", "unix", "redis+socket", "redis-socket"];
const TLS_SOCKET = ["redis+tls+unix", "rediss+unix", "valkey+tls+unix", "valkeys+unix"];

const URL_FORMS =
  "redis://[user:password@]host[:port][/db], rediss:// for TLS, valkey:// and valkeys:// alike, " +
  "or redis+unix://[user:password@]/path/to/socket[?db=N] (unix:// also works)";

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
  if (!/^\d{1,5}$/.test(text)) throw badUrl(`names database "${text}", which is not a number`);
  return Number(text);
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

function hostAndPort(authority: string): { host: string; port: number } {
  if (authority.startsWith("[")) {
    const close = authority.indexOf("]");
    if (close === -1) throw badUrl("has an IPv6 address without its closing ]");
    const after = authority.slice(close + 1);
    if (after !== "" && !after.startsWith(":")) throw badUrl("has something other than a port after its IPv6 address");
    return { host: authority.slice(1, close), port: after ? parsePort(after.slice(1)) : 6379 };
  }
  const colon = authority.lastIndexOf(":");
  const host = colon === -1 ? authority : authority.slice(0, colon);
  if (host === "") throw badUrl("has no host");
  return { host: host.toLowerCase(), port: colon === -1 ? 6379 : parsePort(authority.slice(colon + 1)) };
}

/** Parses AGENTMAIL_URL. A bare absolute path is a unix socket. Throws a usage error naming the accepted forms. */
export function parseServerUrl(input: string): ServerAddress {
  const url = input.trim();
  if (url === "") throw badUrl("is empty");
  if (url.startsWith("/")) return parseServerUrl(`unix://${url}`);
  const parts = split(url);
  const { scheme, user, password, query } = parts;
  const isSocket = SOCKET.includes(scheme) || TLS_SOCKET.includes(scheme);
  if (!isSocket && !PLAIN.includes(scheme) && !TLS.includes(scheme)) throw badUrl(`has the unknown scheme "${scheme}://"`);
  const tls = TLS.includes(scheme) || TLS_SOCKET.includes(scheme);
  if (isSocket) {
    const socket = decode(parts.path, "socket path");
    if (!socket.startsWith("/")) throw badUrl("names no socket path (a unix socket URL is redis+unix:///path/to/socket)");
    const db = parseDb(query.get("db"));
    const display = `${scheme}://${user ? `${encodeURIComponent(user)}@` : ""}${parts.path}${db ? `?db=${db}` : ""}`;
    return { transport: "unix", tls, host: "", port: 0, socket, user, password, db, display };
  }
  const { host, port } = hostAndPort(parts.authority);
  const pathDb = parts.path.replace(/^\/+|\/+$/g, "");
  const db = parseDb(pathDb || query.get("db"));
  const shownHost = host.includes(":") ? `[${host}]` : host;
  const display = `${scheme}://${user ? `${encodeURIComponent(user)}@` : ""}${shownHost}:${port}${db ? `/${db}` : ""}`;
  return { transport: "tcp", tls, host, port, socket: "", user, password, db, display };
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
  const secrets = [address.password, encodeURIComponent(address.password)].filter((secret) => secret.length >= 4);
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
