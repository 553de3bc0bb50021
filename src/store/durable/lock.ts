import { closeSync, lstatSync, readlinkSync, symlinkSync, unlinkSync, type Stats } from "node:fs";
import { isDecimal } from "../../mail/ids.ts";
import { AgentmailError, errorWithNextStep } from "../../mail/errors.ts";
import { createExclusive, openForRead, readRange } from "./files.ts";
import { currentProcess, HOSTNAME, isGone, isStopped, parseIdentity, pidNamespace, type ProcessIdentity } from "./process-identity.ts";

/**
 * A lock is a symlink whose target is its holder's identity, `am1:<pid>:<start>:<host tag>:<token>`, made by one
 * symlink(2) call. Creating it is atomic and fails with EEXIST if anything is at the path, as O_EXCL does; unlike an
 * O_EXCL file, it holds its content from the instant it exists, so there is no window in which a holder killed
 * between create and write leaves an empty lock, and it needs no data block: a short target lives in the inode.
 * Measured on a full tmpfs and a full ext4: creating a file works but writing one byte to it fails with ENOSPC,
 * while a symlink with a target of up to 59 bytes is created; so mail can still be received on a full disk. The
 * target is never followed: it is read with readlink and the lock removed with unlink.
 *
 * Regular-file locks holding JSON (what agentmail wrote before) are still understood when found.
 *
 * The rule for breaking one: a lock is broken only when its holder is certainly gone (dead, a zombie, or its pid
 * reused, which only a process of the same host and pid namespace can tell), or when it names no holder and is older
 * than 2 s. A holder that is alive is never broken, however long it has held the lock and whoever waits: a paused
 * VM, a suspended laptop, a SIGSTOPped process or a long rewrite all resume believing they hold it, and breaking it
 * would let two processes change the same file. A waiter gives up after its timeout with `locked`, naming the holder.
 * A holder on another host or in another pid namespace (a store shared over a network file system, or with a
 * container) cannot be checked, so it is never broken from here: a process of its own host breaks it if it died, or
 * a person removes it.
 *
 * The contract, as git's lockfile.h states its own:
 *   - withLock(path, critical) runs `critical` holding the lock at `path` and releases it however `critical` ends; what
 *     `critical` throws, withLock throws.
 *   - It throws AgentmailError `locked` (exit 1) when the lock is not its after the timeout (AGENTMAIL_LOCK_TIMEOUT
 *     seconds, else 5 s), naming the holder and what to do; `io` when no inode is left to create it (ENOSPC); any other
 *     error of the file system as it is.
 *   - Not reentrant: calls of one process for one path wait in line (Line), so a call made from inside `critical`
 *     for the same path waits for itself and fails `locked` ("held by another call of this process") at the timeout.
 *   - Locks nest in one order, so no two processes wait for each other: a mailbox's archive lock (`.alock`), then its
 *     receive lock (`.rlock`), then its mailbox lock (`.lock`); an agent's mailbox lock, then its roles' queues'
 *     mailbox locks in the order of the roles' names (the doorbell's settle). withBothLocks takes `.lock` then
 *     `.rlock` against that order, and so never waits for the second while holding the first. Of the others, the
 *     bridges' sync lock comes before the mailbox locks a pass writes under; the claims', the memberships' and the
 *     mailman's are taken with no other held.
 */
const LOCK_TAG = "am1";

/** A lock that names no holder (garbled, or an old empty file lock) is stale after this long. */
const UNWRITTEN_STALE_MS = 2_000;
/** A `.break` file left by a breaker that was killed mid-break. */
const BREAK_STALE_MS = 5_000;

interface Holder extends ProcessIdentity {
  token: string;
}

interface Inspection {
  ino: number;
  mtimeMs: number;
  holder: Holder | null;
  stale: boolean;
}

/**
 * The longest pause between tries. A send holds a mailbox's lock for well under a millisecond (its fsync comes after),
 * so a waiter that slept long would leave the lock idle while others wait: short pauses keep the line moving.
 */
const MAX_RETRY_MS = 4;

const sleep = (ms: number) => new Promise((done) => setTimeout(done, ms));

/** FNV-1a of the host name: keeps the target short enough to live in the inode whatever the host is called. */
function hostTag(host: string): string {
  let hash = 0x811c9dc5;
  for (let i = 0; i < host.length; i++) hash = Math.imul(hash ^ host.charCodeAt(i), 0x01000193);
  return (hash >>> 0).toString(16).padStart(8, "0");
}

/**
 * The host tag names the host and the pid namespace: two containers may share a host name while a pid means a
 * different process in each, so a holder in another namespace counts as another host. Locks written before the
 * namespace was part of the tag carry the host name's alone, and are taken as this host's, as they were then.
 */
let ownHostTag: string | undefined;
const ownTag = () => (ownHostTag ??= hostTag(`${HOSTNAME}\0${pidNamespace()}`));
const LEGACY_HOST_TAG = hostTag(HOSTNAME);

function lockTarget(token: string): string {
  const { pid, start } = currentProcess();
  return [LOCK_TAG, pid, start ?? "-", ownTag(), token].join(":");
}

function parseTarget(target: string): Holder | null {
  const [tag, pid, start, host, token, ...rest] = target.split(":");
  if (tag !== LOCK_TAG || rest.length > 0 || !isDecimal(pid ?? "") || !start || !host || !token) return null;
  const holderHost = host === ownTag() || host === LEGACY_HOST_TAG ? HOSTNAME : `another host or container (${host})`;
  return { pid: Number(pid), start: start === "-" ? null : start, host: holderHost, token };
}

/** The JSON content of a regular-file lock, as older versions wrote it. */
function parseFileHolder(bytes: Uint8Array): Holder | null {
  try {
    const value = JSON.parse(new TextDecoder().decode(bytes)) as Partial<Holder>;
    const identity = parseIdentity(value);
    if (!identity || typeof value.token !== "string") return null;
    return { ...identity, token: value.token };
  } catch {
    return null;
  }
}

function readHolder(path: string): { ino: number; mtimeMs: number; holder: Holder | null } | null {
  let stat: Stats;
  try {
    stat = lstatSync(path);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return null;
    throw error;
  }
  if (stat.isSymbolicLink()) {
    try {
      return { ino: stat.ino, mtimeMs: stat.mtimeMs, holder: parseTarget(readlinkSync(path)) };
    } catch (error) {
      // Released (ENOENT) or replaced by something else (EINVAL) in between: look again.
      if (["ENOENT", "EINVAL"].includes((error as NodeJS.ErrnoException).code ?? "")) return null;
      throw error;
    }
  }
  // A regular file is read (without following or blocking); a FIFO or directory is refused by openForRead.
  const file = openForRead(path);
  if (!file) return null;
  try {
    const holder = parseFileHolder(readRange(file.fd, 0, Math.min(file.stat.size, 4096)));
    return { ino: file.stat.ino, mtimeMs: file.stat.mtimeMs, holder };
  } finally {
    closeSync(file.fd);
  }
}

/** Stale by the rule at the top of this file: a holder certainly gone, or none named for 2 s. Never by age alone. */
function inspect(path: string): Inspection | null {
  const read = readHolder(path);
  if (!read) return null;
  const { holder } = read;
  const stale = holder ? isGone(holder) : Date.now() - read.mtimeMs > UNWRITTEN_STALE_MS;
  return { ...read, stale };
}

function sameLock(a: Inspection, b: Inspection): boolean {
  return a.ino === b.ino && a.mtimeMs === b.mtimeMs && a.holder?.token === b.holder?.token;
}

function tryUnlink(path: string): void {
  try {
    unlinkSync(path);
  } catch {
    // Already gone: someone else finished the job.
  }
}

/**
 * Removes a stale lock without the "stat, then unlink" race that lets several contenders hold a lock at once:
 * breakers are serialized by a second O_EXCL file, and the lock is unlinked only if it is still the very lock
 * (inode, mtime, token) that was judged stale. Returns whether this call removed it.
 */
function breakStale(path: string, judged: Inspection): boolean {
  const breakPath = `${path}.break`;
  let fd: number;
  try {
    fd = createExclusive(breakPath);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
    const breaker = openForRead(breakPath);
    if (breaker) {
      closeSync(breaker.fd);
      if (Date.now() - breaker.stat.mtimeMs > BREAK_STALE_MS) tryUnlink(breakPath);
    }
    return false;
  }
  try {
    const now = inspect(path);
    if (!now?.stale || !sameLock(now, judged)) return false;
    tryUnlink(path);
    return true;
  } finally {
    closeSync(fd);
    tryUnlink(breakPath);
  }
}

const HEX = "0123456789abcdef";

/**
 * 12 hex digits that tell one taking of a lock from another (the pid and start time already tell the process): not a
 * secret, so Math.random (docs/performance.md).
 */
function newToken(): string {
  let token = "";
  for (let i = 0; i < 12; i++) token += HEX[Math.floor(Math.random() * 16)]!;
  return token;
}

export interface LockOptions {
  /** How long to wait for a live holder before giving up. */
  timeoutMs?: number;
}

function defaultTimeoutMs(): number {
  const seconds = Number(process.env.AGENTMAIL_LOCK_TIMEOUT);
  return Number.isFinite(seconds) && seconds > 0 ? seconds * 1000 : 5_000;
}

function describeHolder(inspection: Inspection | null): string {
  if (!inspection?.holder) return "a lock that names no holder (a holder killed while writing it, or not agentmail's)";
  const { pid, host } = inspection.holder;
  const age = ((Date.now() - inspection.mtimeMs) / 1000).toFixed(1);
  const stopped = host === HOSTNAME && isStopped(pid) ? ", stopped (SIGSTOP or a suspended job)" : "";
  return `pid ${pid} on ${host} (held ${age}s${stopped})`;
}

function createLock(path: string, target: string): boolean {
  try {
    symlinkSync(target, path);
    return true;
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === "EEXIST") return false;
    if (code === "ENOSPC") {
      throw new AgentmailError("io", `no space left on device to create the lock ${path} (no free inode); free space and retry`);
    }
    throw error;
  }
}

/** Whether the lock is held by this very process (another of its calls): stopping "that process" is no advice then. */
function heldByThisProcess(inspection: Inspection | null): boolean {
  const holder = inspection?.holder;
  const me = currentProcess();
  return holder?.host === HOSTNAME && holder.pid === me.pid && holder.start === me.start;
}

function ownLockError(path: string, heldMs: number): AgentmailError {
  const held = (heldMs / 1000).toFixed(1);
  return errorWithNextStep(
    "locked",
    `${path} is held by another call of this process (pid ${process.pid}, held ${held}s)`,
    "retryAfterOwnCall",
  );
}

/** A live holder is never broken (see the top of this file), so the error says what only a person can do. */
function lockedError(path: string, inspection: Inspection | null): AgentmailError {
  if (heldByThisProcess(inspection)) return ownLockError(path, Date.now() - inspection!.mtimeMs);
  const holder = inspection?.holder;
  const next = !holder
    ? "it is broken once it is 2 s old; retry"
    : holder.host !== HOSTNAME
      ? "a lock from another host or container is never broken from here: if that process is gone, remove the lock file, then retry"
      : "that process is alive, so its lock is never broken: wait for it and retry, or if it is stuck, end it, then retry";
  return new AgentmailError("locked", `${path} is held by ${describeHolder(inspection)}; ${next}`);
}

/**
 * One attempt to take the lock: taken (its token), or busy with what holds it. A stale lock is broken, race-free
 * (above), and taken at once.
 */
function tryAcquire(path: string): { token: string } | { busy: Inspection | null } {
  const token = newToken();
  const target = lockTarget(token);
  for (;;) {
    if (createLock(path, target)) return { token };
    const inspection = inspect(path);
    if (inspection === null) continue;
    // Retry at once only when this call broke the lock; another breaker at work means waiting like anyone else.
    if (!(inspection.stale && breakStale(path, inspection))) return { busy: inspection };
  }
}

/**
 * The calls of this process that want one lock, in the order they came: only the first contends for the lock file.
 * Without it, a long-lived process running several calls at once (the MCP server answering parallel receives of one
 * mailbox) would have its calls poll the file against each other, each counting the others' turns against its
 * timeout, and fail naming its own pid while nothing is stuck. A call in line gives up only when the line has not moved (no call
 * of this process took or let go of the lock) for the timeout: a turn that hangs, not a long line.
 */
interface Line {
  /** Settles once the last call in line is done with the lock. */
  tail: Promise<void>;
  /** When a call of this process last took or let go of the lock, or the line began. */
  movedAt: number;
}

const lines = new Map<string, Line>();

/** Settles when the calls ahead are done; fails when the line stays still for `timeoutMs` meanwhile. */
function awaitTurn(path: string, line: Line, ahead: Promise<void>, joinedAt: number, timeoutMs: number): Promise<void> {
  return new Promise<void>((turn, giveUp) => {
    let timer: ReturnType<typeof setTimeout> | undefined;
    const check = () => {
      const still = Date.now() - Math.max(joinedAt, line.movedAt);
      if (still > timeoutMs) giveUp(ownLockError(path, still));
      else timer = setTimeout(check, timeoutMs - still + 1);
    };
    void ahead.then(() => {
      clearTimeout(timer);
      turn();
    });
    timer = setTimeout(check, timeoutMs + 1);
  });
}

/** Takes the lock file, waiting for other processes until `deadline`, and runs `critical` holding it. */
async function holding<T>(path: string, line: Line, deadline: number, critical: () => T | Promise<T>): Promise<T> {
  let delay = 1;
  for (;;) {
    const attempt = tryAcquire(path);
    if ("token" in attempt) {
      line.movedAt = Date.now();
      try {
        return await critical();
      } finally {
        release(path, attempt.token);
        line.movedAt = Date.now();
      }
    }
    if (Date.now() > deadline) throw lockedError(path, attempt.busy);
    await sleep(delay * (0.5 + Math.random()));
    delay = Math.min(delay * 2, MAX_RETRY_MS);
  }
}

/**
 * Runs `critical` while holding the lock at `path`. The lock survives its holder being SIGKILLed: a dead, zombie
 * or reused pid, or a lock naming no holder older than 2 s, is broken; a live holder never is (see the top of this
 * file). Retries back off from 1 ms doubling to MAX_RETRY_MS with jitter, until the timeout: then `locked`. Calls of one
 * process wait in line (see Line).
 */
export async function withLock<T>(path: string, critical: () => T | Promise<T>, options: LockOptions = {}): Promise<T> {
  const timeoutMs = options.timeoutMs ?? defaultTimeoutMs();
  const joinedAt = Date.now();
  let line = lines.get(path);
  const first = !line;
  if (!line) lines.set(path, (line = { tail: Promise.resolve(), movedAt: joinedAt }));
  const ahead = line.tail;
  let leave!: () => void;
  const mine = new Promise<void>((done) => (leave = done));
  line.tail = mine;
  const done = () => {
    leave();
    if (line.tail === mine) lines.delete(path);
  };
  try {
    if (!first) await awaitTurn(path, line, ahead, joinedAt, timeoutMs);
  } catch (error) {
    // Those behind this call still wait for the calls ahead of it, so that one call at a time contends for the file.
    void ahead.then(done);
    throw error;
  }
  try {
    // Other processes get the full timeout from the line's last move: after a call that gave up, at most one try.
    return await holding(path, line, Math.max(joinedAt, line.movedAt) + timeoutMs, critical);
  } finally {
    done();
  }
}

/**
 * Runs `critical` holding two locks, `outer` and then `inner`, without ever waiting for `inner` while holding `outer`:
 * when `inner` is busy, `outer` is let go and both are tried again. For a rare job that needs both (cleanup), where
 * frequent holders of `inner` (receivers) may wait for `outer`: no deadlock, and they are never held up by the job
 * waiting its turn for `outer`.
 */
export async function withBothLocks<T>(
  outer: string,
  inner: string,
  critical: () => T | Promise<T>,
  innerOptions: LockOptions = {},
): Promise<T> {
  const timeoutMs = innerOptions.timeoutMs ?? defaultTimeoutMs();
  const started = Date.now();
  let delay = 1;
  for (;;) {
    const outcome = await withLock(outer, async () => {
      const attempt = tryAcquire(inner);
      if (!("token" in attempt)) return attempt;
      try {
        return { value: await critical() };
      } finally {
        release(inner, attempt.token);
      }
    });
    if ("value" in outcome) return outcome.value;
    if (Date.now() - started > timeoutMs) throw lockedError(inner, outcome.busy);
    await sleep(delay * (0.5 + Math.random()));
    delay = Math.min(delay * 2, MAX_RETRY_MS);
  }
}

/** Removes the lock only if it is still ours: it may have been broken as stale and taken by another. */
function release(path: string, token: string): void {
  try {
    if (readHolder(path)?.holder?.token === token) tryUnlink(path);
  } catch {
    // Unreadable now: not ours to remove.
  }
}

/** What `doctor` sees of a lock file: who holds it, for how long, and whether it is stale (see withLock). */
export interface LockReport {
  holder: string;
  ageMs: number;
  stale: boolean;
}

export function lockReport(path: string): LockReport | null {
  const inspection = inspect(path);
  if (!inspection) return null;
  return { holder: describeHolder(inspection), ageMs: Date.now() - inspection.mtimeMs, stale: inspection.stale };
}

/** Removes a lock only if it is stale, race-free as withLock breaks it; returns whether it was removed. */
export function removeStaleLock(path: string): boolean {
  const inspection = inspect(path);
  return inspection?.stale === true && breakStale(path, inspection);
}

/** A breaker's `.break` file left behind longer than a break takes: its breaker was killed mid-break. */
export function isStaleBreak(ageMs: number): boolean {
  return ageMs > BREAK_STALE_MS;
}
