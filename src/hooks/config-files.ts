/**
 * Reading and writing other programs' settings files (Claude Code, Codex CLI, Gemini CLI) for `hooks install`.
 * These are not ours, so: a symlink is followed on purpose (dotfile setups link settings into a repository) and the
 * link itself is kept; a FIFO or directory is refused; a file its owner made read-only is refused; the old bytes are
 * backed up before anything is replaced; a write goes to a temp file that is renamed over the original, keeping its
 * mode (and owner, when run as root), except for a hard-linked file, which is rewritten in place so every link keeps
 * seeing it; a file that another program changed since it was read is not overwritten; and a failure names the
 * settings file or backup it concerns.
 */
import {
  closeSync,
  constants,
  fchmodSync,
  fchownSync,
  fstatSync,
  fsyncSync,
  ftruncateSync,
  lstatSync,
  mkdirSync,
  openSync,
  readSync,
  realpathSync,
  renameSync,
  statSync,
  unlinkSync,
  type Stats,
} from "node:fs";
import { basename, dirname, join } from "node:path";
import { AgentmailError } from "../mail/errors.ts";
import { syncDirectory, writeFully } from "../store/durable/files.ts";

const { O_RDONLY, O_WRONLY, O_CREAT, O_EXCL, O_NOFOLLOW, O_NONBLOCK } = constants;

/** Far above any settings file (~/.claude.json grows to a few MiB); a bigger one is not a settings file. */
const MAX_CONFIG_BYTES = 64 * 1024 * 1024;

export interface ConfigFile {
  /** The path as named. */
  path: string;
  /** What is read and written: the symlink's target when `path` is a symlink. */
  target: string;
  exists: boolean;
  text: string;
  mode: number;
  /** Identity when read; a write is refused if the file no longer matches it. */
  stamp: string | null;
  owner: { uid: number; gid: number } | null;
  /** Hard links to it: more than one means it must be rewritten in place, or the others would keep the old text. */
  links: number;
}

const stampOf = (stat: Stats) => `${stat.dev}:${stat.ino}:${stat.size}:${stat.mtimeMs}:${stat.ctimeMs}`;

function unsafe(path: string, what: string): AgentmailError {
  return new AgentmailError(
    "unsafe_path",
    `${path} is ${what}, not a settings file; move it away, then run the command again; nothing was changed`,
  );
}

function resolveTarget(path: string): string | null {
  let link: Stats;
  try {
    link = lstatSync(path);
  } catch (error) {
    // ENOTDIR: a file where a folder of the path should be; it cannot exist, and writing it will say why.
    const code = (error as NodeJS.ErrnoException).code;
    if (code === "ENOENT" || code === "ENOTDIR") return null;
    throw failed(error, `cannot read ${path}`, "make its folder readable, then run the command again; nothing was changed");
  }
  if (!link.isSymbolicLink()) return path;
  try {
    return realpathSync(path);
  } catch {
    throw unsafe(path, "a symlink to a file that does not exist");
  }
}

function readAll(fd: number, size: number): Buffer {
  const buffer = Buffer.alloc(size);
  let done = 0;
  while (done < size) {
    const n = readSync(fd, buffer, done, size - done, done);
    if (n === 0) break;
    done += n;
  }
  return buffer.subarray(0, done);
}

export function readConfigFile(path: string): ConfigFile {
  const target = resolveTarget(path);
  if (target === null) return { path, target: path, exists: false, text: "", mode: 0, stamp: null, owner: null, links: 0 };
  let fd: number;
  try {
    fd = openSync(target, O_RDONLY | O_NONBLOCK | O_NOFOLLOW);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === "ENXIO") throw unsafe(path, "a FIFO or socket");
    if (code === "EISDIR") throw unsafe(path, "a directory");
    throw failed(error, `cannot read ${path}`, "make it readable, then run the command again; nothing was changed");
  }
  try {
    const stat = fstatSync(fd);
    if (!stat.isFile()) throw unsafe(path, stat.isDirectory() ? "a directory" : stat.isFIFO() ? "a FIFO" : "a special file");
    if (stat.size > MAX_CONFIG_BYTES) throw unsafe(path, `${stat.size} bytes long`);
    let text: string;
    try {
      text = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true }).decode(readAll(fd, stat.size));
    } catch {
      throw new AgentmailError(
        "conflict",
        `cannot parse ${path} (it is not UTF-8 text); fix it or move it away, then run the command again; nothing was changed`,
      );
    }
    const owner = { uid: stat.uid, gid: stat.gid };
    return { path, target, exists: true, text, mode: stat.mode & 0o7777, stamp: stampOf(stat), owner, links: stat.nlink };
  } finally {
    closeSync(fd);
  }
}

/** An errno failure as an error about the file it concerns (not the generic one about the mail store). */
function failed(error: unknown, what: string, fix: string): unknown {
  const code = (error as NodeJS.ErrnoException | undefined)?.code;
  if (error instanceof AgentmailError || !code) return error;
  return new AgentmailError("io", `${what} (${code}); ${fix}`);
}

/**
 * A file whose owner took away its own write permission was made read-only on purpose: refused even where it could
 * be written (as root). `purpose` says what writing it was for, as in "install its hooks".
 */
export function refuseReadOnly(file: ConfigFile, purpose: string): void {
  if (!file.exists || (file.mode & 0o200) !== 0) return;
  const fix = `make it writable (chmod u+w ${file.path}) to let agentmail ${purpose}`;
  throw new AgentmailError("conflict", `${file.path} is read-only; ${fix}; nothing was changed`);
}

function refuseIfChanged(file: ConfigFile, stat?: Stats): void {
  let now: string | null = null;
  try {
    now = stampOf(stat ?? statSync(file.target));
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "ENOENT") throw error;
  }
  if (now !== file.stamp) {
    throw new AgentmailError(
      "conflict",
      `${file.path} changed while agentmail was editing it (another program wrote it); run the command again`,
    );
  }
}

/**
 * Writes a new file next to the target and renames it over the target: a reader sees the old or the new file, never
 * a mix. A hard-linked target is rewritten in place instead (see writeInPlace).
 */
export function writeConfigFile(file: ConfigFile, text: string, newFileMode: number): void {
  const dir = dirname(file.target);
  try {
    if (file.exists && file.links > 1) {
      writeInPlace(file, Buffer.from(text, "utf8"));
      return;
    }
    mkdirSync(dir, { recursive: true, mode: 0o755 });
    replaceConfigFile(file, text, newFileMode);
  } catch (error) {
    throw failed(error, `cannot write ${file.path}`, `make sure ${dir} is a directory you can write to, then run the command again`);
  }
}

function replaceConfigFile(file: ConfigFile, text: string, newFileMode: number): void {
  const dir = dirname(file.target);
  const mode = file.exists ? file.mode : newFileMode;
  const temp = join(dir, `.${basename(file.target)}.agentmail-${crypto.randomUUID().slice(0, 8)}.tmp`);
  const fd = openSync(temp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW, mode);
  try {
    try {
      writeFully(fd, text);
      // The umask may have narrowed the mode given to open; the original's mode is what must survive.
      fchmodSync(fd, mode);
      if (file.owner && process.getuid?.() === 0) fchownSync(fd, file.owner.uid, file.owner.gid);
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
    refuseIfChanged(file);
    renameSync(temp, file.target);
  } catch (error) {
    try {
      unlinkSync(temp);
    } catch {
      // Already renamed or never created.
    }
    throw error;
  }
  syncDirectory(dir);
}

/**
 * A rename would give one link the new text and leave the others on the old inode, so a hard-linked file is
 * overwritten through its own descriptor, then cut to length and fsynced. Not atomic: a crash midway can leave a
 * mix of old and new text, which is why this runs only after the backup was written, and only for linked files.
 */
function writeInPlace(file: ConfigFile, bytes: Uint8Array): void {
  const fd = openSync(file.target, O_WRONLY | O_NOFOLLOW | O_NONBLOCK);
  try {
    refuseIfChanged(file, fstatSync(fd));
    writeFully(fd, bytes, 0);
    ftruncateSync(fd, bytes.length);
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}

/** Removes a file left with nothing in it; a symlinked or hard-linked one is kept (emptied) so no link dangles or goes stale. */
export function removeConfigFile(file: ConfigFile, emptyText: string): void {
  if (file.target !== file.path || file.links > 1) {
    writeConfigFile(file, emptyText, file.mode);
    return;
  }
  refuseIfChanged(file);
  try {
    unlinkSync(file.target);
  } catch (error) {
    const fix = `make sure ${dirname(file.target)} is a directory you can write to, then run the command again`;
    throw failed(error, `cannot remove ${file.path}`, fix);
  }
  syncDirectory(dirname(file.target));
}

/** Where backups go: out of the repository, so they are never committed by accident. */
export function backupRoot(env: Record<string, string | undefined>, home: string): string {
  return join(env.XDG_STATE_HOME || join(home, ".local", "state"), "agentmail", "backups");
}

/** Copies the file's bytes as read to `<root>/<time>/<its absolute path>` (0600: settings can hold secrets). */
export function backupConfigFile(file: ConfigFile, root: string, now: Date = new Date()): string {
  try {
    return writeBackup(file, root, now);
  } catch (error) {
    const fix = "make that folder writable (or set XDG_STATE_HOME), then run the command again";
    throw failed(error, `cannot back up ${file.path} into ${root}`, fix);
  }
}

function writeBackup(file: ConfigFile, root: string, now: Date): string {
  const stamp = now.toISOString().replace(/[:.]/g, "-");
  for (let attempt = 0; ; attempt++) {
    const path = join(root, attempt === 0 ? stamp : `${stamp}-${attempt}`, file.target);
    mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
    let fd: number;
    try {
      fd = openSync(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW, 0o600);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === "EEXIST") continue;
      throw error;
    }
    try {
      writeFully(fd, file.text);
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
    return path;
  }
}
