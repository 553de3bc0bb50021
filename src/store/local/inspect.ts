/**
 * What `doctor` finds wrong in a store, file by file, without changing anything; and the safe repairs it may make
 * (a stale lock, a stray temp file, a cursor that would not be used). Which file is what, and which may be repaired,
 * comes from the store's layout (layout.ts). Nothing here ever touches a mailbox's lines, nor a file agentmail does
 * not keep.
 */
import { closeSync, lstatSync, readdirSync, rmSync, type Stats } from "node:fs";
import { join } from "node:path";
import { findReadFlag, parseMessage } from "../../mail/message.ts";
import { decodeName } from "../../mail/names.ts";
import { openForRead } from "../durable/files.ts";
import { eachChunk } from "../durable/line-chunks.ts";
import { isStaleBreak, lockReport, removeStaleLock } from "../durable/lock.ts";
import { cursorProblemOf } from "../file/mailbox.ts";
import { membershipPath, readMemberships } from "../file/memberships.ts";
import { kept, tempFilePid, type Kept, type Place } from "./layout.ts";
import { HOSTNAME, isGone } from "../durable/process-identity.ts";

type IssueKind =
  | "symlink"
  | "foreign"
  | "misshapen"
  | "mode"
  | "owner"
  | "stray_temp"
  | "stale_lock"
  | "stale_break"
  | "bad_cursor"
  | "malformed_lines"
  | "torn_line"
  | "unparseable"
  | "unreadable";

export interface StoreIssue {
  kind: IssueKind;
  path: string;
  /** What exactly is wrong, in a few words (no path). */
  detail: string;
  /** `doctor --fix` may repair it: stale locks and breaks, stray temp files, bad cursors. */
  fixable: boolean;
  /** malformed_lines: the numbers of the lines (from 1) that are not messages. */
  lines?: number[];
  /** mode: the mode agentmail gives it. */
  wantedMode?: number;
}

/** A temp file older than this is stray even if a process with its pid is alive (pids are reused). */
const TEMP_STALE_MS = 60_000;
const NEWLINE = 0x0a;

const uid = () => (typeof process.getuid === "function" ? process.getuid() : null);

function entries(dir: string): { name: string; path: string; stat: Stats }[] {
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return [];
  }
  return names.flatMap((name) => {
    const path = join(dir, name);
    try {
      return [{ name, path, stat: lstatSync(path) }];
    } catch {
      return [];
    }
  });
}

function modeIssues(path: string, stat: Stats, wanted: number): StoreIssue[] {
  const issues: StoreIssue[] = [];
  const mode = stat.mode & 0o777;
  if ((mode & 0o077) !== 0) {
    issues.push({
      kind: "mode",
      path,
      detail: `mode ${mode.toString(8).padStart(4, "0")}, not ${wanted.toString(8).padStart(4, "0")}`,
      fixable: false,
      wantedMode: wanted,
    });
  }
  const me = uid();
  if (me !== null && stat.uid !== me)
    issues.push({ kind: "owner", path, detail: `owned by uid ${stat.uid}, not by you (uid ${me})`, fixable: false });
  return issues;
}

/**
 * Lines of a mailbox that are not messages, and a last line with no newline (a writer killed mid-append). Read a chunk
 * at a time (line-chunks.ts), each chunk decoded once: a million-line mailbox costs a chunk of memory, not its size.
 */
function lineIssues(path: string): StoreIssue[] {
  let file: ReturnType<typeof openForRead>;
  try {
    file = openForRead(path);
  } catch (error) {
    return [{ kind: "unreadable", path, detail: error instanceof Error ? error.message : String(error), fixable: false }];
  }
  if (!file) return [];
  const bad: number[] = [];
  let lineNumber = 0;
  let end: number;
  try {
    end = eachChunk(file.fd, 0, file.stat.size, (chunk) => {
      const text = decoder.decode(chunk);
      let start = 0;
      let at = 0;
      while (start < chunk.length) {
        const stop = chunk.indexOf(NEWLINE, start);
        const textStop = text.indexOf("\n", at);
        lineNumber++;
        // A line decoded on its own loses a leading byte order mark, as receive decodes it.
        const from = text.charCodeAt(at) === 0xfeff ? at + 1 : at;
        const isMessage = findReadFlag(chunk, start, stop) !== null && parseMessage(text.slice(from, textStop)) !== null;
        // Only the first few are named, but every one is counted.
        if (!isMessage) bad.push(lineNumber);
        start = stop + 1;
        at = textStop + 1;
      }
    });
  } finally {
    closeSync(file.fd);
  }
  const issues: StoreIssue[] = [];
  if (bad.length > 0) {
    const shown = bad.slice(0, 5).join(", ") + (bad.length > 5 ? ", …" : "");
    const detail =
      bad.length === 1 ? `1 line that is not a message (line ${shown})` : `${bad.length} lines that are not messages (lines ${shown})`;
    issues.push({ kind: "malformed_lines", path, detail, fixable: false, lines: bad });
  }
  if (end < file.stat.size)
    issues.push({ kind: "torn_line", path, detail: `its last line has no newline (${file.stat.size - end} bytes)`, fixable: false });
  return issues;
}

const decoder = new TextDecoder();

function tempIssue(path: string, name: string, stat: Stats): StoreIssue | null {
  const pid = tempFilePid(name);
  if (pid === null) return null;
  const age = Date.now() - stat.mtimeMs;
  if (age <= TEMP_STALE_MS && !isGone({ pid, host: HOSTNAME, start: null })) return null;
  return { kind: "stray_temp", path, detail: `a temp file left by process ${pid}`, fixable: true };
}

function breakIssue(path: string, stat: Stats): StoreIssue | null {
  const age = Date.now() - stat.mtimeMs;
  return isStaleBreak(age)
    ? { kind: "stale_break", path, detail: `a lock breaker's file ${Math.round(age / 1000)} s old`, fixable: true }
    : null;
}

function lockIssue(path: string): StoreIssue | null {
  const report = lockReport(path);
  if (!report?.stale) return null;
  return { kind: "stale_lock", path, detail: `a stale lock, left by ${report.holder}`, fixable: true };
}

const SYMLINK = "a symlink, which agentmail never follows";

/** What is wrong with one entry agentmail keeps (layout.ts): its shape, its age for what goes stale, its mode, its lines. */
function keptIssues(dir: string, name: string, path: string, stat: Stats, entry: Kept): StoreIssue[] {
  if (entry.repair === "stray_temp") return stat.isFile() ? [tempIssue(path, name, stat)].filter((issue) => issue !== null) : [];
  if (entry.shape === "lock") {
    // A lock is a symlink naming its holder (or an older version's file), read and never followed.
    if (stat.isSymbolicLink() || stat.isFile()) return [lockIssue(path)].filter((issue) => issue !== null);
    return [
      { kind: "misshapen", path, detail: "not a lock agentmail made (a directory or special file at a lock's name)", fixable: false },
    ];
  }
  if (stat.isSymbolicLink()) return [{ kind: "symlink", path, detail: SYMLINK, fixable: false }];
  if (entry.shape === "directory") {
    if (!stat.isDirectory())
      return [{ kind: "misshapen", path, detail: `not a directory, where agentmail keeps ${entry.what}`, fixable: false }];
    const issues = modeIssues(path, stat, 0o700);
    if (entry.place) issues.push(...placeIssues(path, entry.place));
    return issues;
  }
  if (!stat.isFile())
    return [{ kind: "misshapen", path, detail: `not a regular file, where agentmail keeps ${entry.what}`, fixable: false }];
  if (entry.repair === "stale_break") return [breakIssue(path, stat)].filter((issue) => issue !== null);
  const issues = modeIssues(path, stat, 0o600);
  if (entry.repair === "bad_cursor") {
    const agent = decodeName(name.slice(0, -".jsonl.cursor".length));
    const problem = agent === null ? "it names no mailbox" : cursorProblemOf(dir, agent);
    if (problem) issues.push({ kind: "bad_cursor", path, detail: `a cursor receive would not use: ${problem}`, fixable: true });
  } else if (entry.mailbox) issues.push(...lineIssues(path));
  return issues;
}

/** Every entry of one directory of the store, as layout.ts says that place holds: what agentmail keeps, and the rest. */
function placeIssues(dir: string, place: Place): StoreIssue[] {
  const issues: StoreIssue[] = [];
  for (const { name, path, stat } of entries(dir)) {
    const entry = kept(place, name);
    if (entry) issues.push(...keptIssues(dir, name, path, stat, entry));
    else {
      const what = stat.isSymbolicLink() ? "a symlink" : stat.isDirectory() ? "a directory" : "a file";
      issues.push({ kind: "foreign", path, detail: `${what} agentmail does not keep; mail goes on without it`, fixable: false });
    }
  }
  return issues;
}

/** Every issue of a store. A store that does not exist yet has none. */
export function inspectStore(root: string): StoreIssue[] {
  let stat: Stats;
  try {
    stat = lstatSync(root);
  } catch {
    return [];
  }
  const issues = modeIssues(root, stat, 0o700);
  issues.push(...placeIssues(root, "top"));
  for (const kind of ["groups", "roles"] as const) {
    try {
      readMemberships(root, kind);
    } catch (error) {
      issues.push({
        kind: "unparseable",
        path: membershipPath(root, kind),
        detail: error instanceof Error ? error.message : String(error),
        fixable: false,
      });
    }
  }
  return issues;
}

/** Makes one safe repair; returns whether it was made (a lock that came alive again is left alone). */
export function repair(issue: StoreIssue): boolean {
  if (!issue.fixable) return false;
  if (issue.kind === "stale_lock") return removeStaleLock(issue.path);
  rmSync(issue.path, { force: true });
  return true;
}
