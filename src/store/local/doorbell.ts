/**
 * The doorbell's files (the rule, and the shell that reads them, are mail/doorbell.ts's):
 *
 *   <root>/.bells/<encoded name>/bell    rung (not empty) or quiet (empty); missing: the hook starts agentmail
 *   <root>/.bells/<encoded name>/ready   written by the Stop hook's shell when the bell was quiet (status.ts reads
 *                                        it; any status agentmail writes removes it)
 *   the pane's and a Codex thread's pointers (mail/doorbell.ts): symlinks to the bell dir, made by pointPane
 *
 * A ring is written under the mailbox's lock, after the message is in the file; a bell is emptied (quiet) only under
 * the locks of the agent's mailbox and of its roles' queues, once nothing is unread in them (FileStore's doorbells).
 */
import {
  closeSync,
  constants,
  lstatSync,
  mkdirSync,
  openSync,
  readdirSync,
  readlinkSync,
  renameSync,
  rmSync,
  symlinkSync,
  statSync,
  writeSync,
} from "node:fs";
import { join } from "node:path";
import { BELL_FILE, panePointer, READY_FILE, threadPointer, type HookThread, type Pointer } from "../../mail/doorbell.ts";
import { decodeName, encodeName } from "../../mail/names.ts";
import { BELLS_DIR } from "./layout.ts";

const { O_WRONLY, O_APPEND, O_CREAT, O_TRUNC, O_NOFOLLOW, O_NONBLOCK } = constants;

type Env = Record<string, string | undefined>;

const RING = new Uint8Array([0x2e]);

export const bellDir = (root: string, name: string): string => join(root, BELLS_DIR, encodeName(name));
const bellPath = (root: string, name: string) => join(bellDir(root, name), BELL_FILE);
export const readyPath = (root: string, name: string): string => join(bellDir(root, name), READY_FILE);

/**
 * Rings `name`'s bell: one byte appended. No bell (no hook ever looked here) needs no ring: the hook starts agentmail.
 * A bell that cannot be rung (a full disk) is removed instead, which tells the hook the same.
 */
export function ring(root: string, name: string): void {
  const path = bellPath(root, name);
  let fd: number;
  try {
    fd = openSync(path, O_WRONLY | O_APPEND | O_NOFOLLOW | O_NONBLOCK);
  } catch {
    return;
  }
  try {
    writeSync(fd, RING);
  } catch {
    try {
      rmSync(path, { force: true });
    } catch {
      // Nothing more to try; the message itself is stored.
    }
  } finally {
    closeSync(fd);
  }
}

export function ringAll(root: string, names: Iterable<string>): void {
  for (const name of names) ring(root, name);
}

/** The agents that have a bell. */
export function bellNames(root: string): string[] {
  const names: string[] = [];
  try {
    for (const stem of readdirSync(join(root, BELLS_DIR))) {
      const name = decodeName(stem);
      if (name !== null) names.push(name);
    }
  } catch {
    // No bells.
  }
  return names;
}

/**
 * Whether `name`'s bell is rung, looked at without a lock: a hook that finds it quiet or missing (no pane points
 * here) has nothing to settle. A ring that comes after the look is the next hook's.
 */
export function isRung(root: string, name: string): boolean {
  try {
    return statSync(bellPath(root, name)).size > 0;
  } catch {
    return false;
  }
}

/** Empties `name`'s bell (making it if need be); the caller holds the locks that make "nothing unread" still true. */
export function quiet(root: string, name: string): void {
  mkdirSync(bellDir(root, name), { recursive: true, mode: 0o700 });
  closeSync(openSync(bellPath(root, name), O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_NONBLOCK, 0o600));
}

/** Makes `name`'s bell unless it is there (pointPane rings it next). */
function ensureBell(root: string, name: string): void {
  mkdirSync(bellDir(root, name), { recursive: true, mode: 0o700 });
  closeSync(openSync(bellPath(root, name), O_WRONLY | O_APPEND | O_CREAT | O_NOFOLLOW | O_NONBLOCK, 0o600));
}

/**
 * When the Stop hook's shell last found the bell quiet and marked the agent ready, or null. Any status agentmail
 * writes after that removes the mark (clearReady), so a mark that exists is the latest word.
 */
export function readyMark(root: string, name: string): Date | null {
  try {
    return statSync(readyPath(root, name)).mtime;
  } catch {
    return null;
  }
}

export function clearReady(root: string, name: string): void {
  try {
    rmSync(readyPath(root, name), { force: true });
  } catch {
    // Not there, or not ours to remove: its status is then read as the mark says until a hook writes again.
  }
}

/** Whether a pointer directory is one the hook may trust: ours, a real directory, writable by nobody else. */
function trustedDirectory(dir: string): boolean {
  try {
    const stat = lstatSync(dir);
    return stat.isDirectory() && (stat.mode & 0o022) === 0 && (process.getuid === undefined || stat.uid === process.getuid());
  } catch {
    return false;
  }
}

/**
 * Points the caller's pane at `name`'s bell in the store at `root` (made rung if new), and the Codex thread a hook in
 * Codex's daemon serves, if any. Best effort: a pane that cannot be pointed only means its hook starts agentmail every
 * time, as without a doorbell.
 */
export function pointPane(env: Env, root: string, name: string, thread?: HookThread): void {
  for (const pointer of [panePointer(env), thread === undefined ? null : threadPointer(thread)])
    if (pointer !== null) pointAt(pointer, root, name);
}

function pointAt(pointer: Pointer, root: string, name: string): void {
  const target = bellDir(root, name);
  try {
    if (readlinkSync(pointer.path) === target && statSync(bellPath(root, name)).isFile()) return;
  } catch {
    // No pointer yet, or another one.
  }
  try {
    // Rung: mail may have come while no pane pointed here, and a bell made now was rung by nobody.
    ensureBell(root, name);
    ring(root, name);
    try {
      mkdirSync(pointer.dir, { mode: 0o700 });
    } catch {
      // There already; checked next.
    }
    if (!trustedDirectory(pointer.dir)) return;
    const temp = `${pointer.path}.tmp-${process.pid}`;
    rmSync(temp, { force: true });
    symlinkSync(target, temp);
    renameSync(temp, pointer.path);
  } catch {
    // Best effort (see above).
  }
}

/** Removes the caller's pane pointer (and its thread's): its agent uses a store without bells now (Redis), so its hook must ask. */
export function unpointPane(env: Env, thread?: HookThread): void {
  for (const pointer of [panePointer(env), thread === undefined ? null : threadPointer(thread)]) {
    if (!pointer) continue;
    try {
      rmSync(pointer.path, { force: true });
    } catch {
      // Pointers are made only in a directory of this user's (pointPane), where removing one does not fail.
    }
  }
}
