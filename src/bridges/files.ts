/**
 * Files in peers' directories, read and written so that nothing is torn, followed, overwritten or lost: reads refuse
 * links and special files; new files are written to a temp file, fsynced, and linked into place (link fails where a
 * file exists, where rename would replace it); moves verify the source is still the file that was read.
 */
import { createHash } from "node:crypto";
import {
  closeSync,
  constants,
  fstatSync,
  fsyncSync,
  linkSync,
  lstatSync,
  mkdirSync,
  openSync,
  readSync,
  renameSync,
  rmSync,
  unlinkSync,
  type BigIntStats,
} from "node:fs";
import { basename, dirname, join } from "node:path";
import { AgentmailError } from "../mail/errors.ts";
import { syncDirectory, writeFully } from "../store/durable/files.ts";
import { isAlive } from "../store/durable/process-identity.ts";
import { malformed } from "./formats/frontmatter.ts";
import { displayName } from "../mail/names.ts";

const { O_RDONLY, O_NOFOLLOW, O_NONBLOCK, O_WRONLY, O_CREAT, O_EXCL } = constants;

/** Files peers read are plain files of the user (the umask applies), as the peers' own tools write them. */
const PEER_FILE_MODE = 0o644;
const PEER_DIR_MODE = 0o755;

/** What a file was when it was read: a move or delete goes ahead only while it is still that file. */
export interface Identity {
  dev: string;
  ino: string;
  size: number;
  mtimeNs: string;
}

export interface PeerFile {
  text: string;
  identity: Identity;
  sha256: string;
  /** The status-change time, for telling a file still being written from one at rest. */
  ctimeMs: number;
  mtime: Date;
}

const identityOf = (stat: BigIntStats): Identity => ({
  dev: String(stat.dev),
  ino: String(stat.ino),
  size: Number(stat.size),
  mtimeNs: String(stat.mtimeNs),
});

export const sameIdentity = (a: Identity, b: Identity) =>
  a.dev === b.dev && a.ino === b.ino && a.size === b.size && a.mtimeNs === b.mtimeNs;

const sha256 = (bytes: Uint8Array) => createHash("sha256").update(bytes).digest("hex");

const utf8 = new TextDecoder("utf-8", { fatal: true });

/**
 * Opens a file in a peer's directory (`where`: "a bridged directory", "a team directory") for reading, never through a
 * symlink and never waiting on a FIFO: null when it is gone, a Malformed saying why when it is a link.
 */
export function openInPeerDir(path: string, where: string): number | null {
  try {
    return openSync(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === "ENOENT") return null;
    if (code === "ELOOP") malformed(`it is a symlink; agentmail does not follow links in ${where}`);
    throw error;
  }
}

/**
 * Reads a peer's message file whole, or throws Malformed: a symlink, FIFO or directory is never followed or waited
 * on, a file over `maxBytes` is not read, and text that is not UTF-8 is refused. Null when the file is gone.
 */
export function readPeerFile(path: string, maxBytes: number): PeerFile | null {
  const fd = openInPeerDir(path, "a bridged directory");
  if (fd === null) return null;
  try {
    const stat = fstatSync(fd, { bigint: true });
    if (!stat.isFile()) malformed("it is not a regular file");
    if (stat.size > BigInt(maxBytes)) malformed(`it is ${stat.size} bytes, over the ${maxBytes}-byte limit for a message`);
    const bytes = Buffer.allocUnsafe(Number(stat.size));
    let done = 0;
    while (done < bytes.length) {
      const n = readSync(fd, bytes, done, bytes.length - done, done);
      if (n === 0) break;
      done += n;
    }
    const content = bytes.subarray(0, done);
    let text: string;
    try {
      text = utf8.decode(content);
    } catch {
      return malformed("it is not UTF-8 text");
    }
    return { text, identity: identityOf(stat), sha256: sha256(content), ctimeMs: Number(stat.ctimeMs), mtime: stat.mtime };
  } finally {
    closeSync(fd);
  }
}

/** The identity of whatever is at `path` now (without following a link), or null. */
export function identityAt(path: string): Identity | null {
  try {
    return identityOf(lstatSync(path, { bigint: true }));
  } catch {
    return null;
  }
}

/** Creates `dir` (and its parents) if needed and refuses a symlink or a non-directory there. */
export function ensurePeerDir(dir: string): void {
  try {
    mkdirSync(dir, { recursive: true, mode: PEER_DIR_MODE });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "EEXIST") {
      throw new AgentmailError("io", `cannot create ${dir} (${(error as NodeJS.ErrnoException).code}); check its parent's permissions`);
    }
  }
  const stat = lstatSync(dir);
  if (!stat.isDirectory()) {
    const what = stat.isSymbolicLink() ? "a symlink" : "not a directory";
    throw new AgentmailError("unsafe_path", `${dir} is ${what}; agentmail writes only into real directories there; fix or remove it`);
  }
}

const tempName = () => `.agentmail-${process.pid}-${Math.random().toString(36).slice(2, 10)}.tmp`;
const TEMP = /^\.agentmail-(\d+)-[a-z0-9]+\.tmp$/;

/** Removes temp files of writers that were killed before they could (their pid is gone); others' are left alone. */
export function removeStaleTemps(dir: string, names: readonly string[]): void {
  for (const name of names) {
    const pid = TEMP.exec(name)?.[1];
    if (pid !== undefined && Number(pid) !== process.pid && !isAlive(Number(pid))) rmSync(join(dir, name), { force: true });
  }
}

/** Hard links are not everywhere (some network and FUSE file systems): there, rename after a look, never over a file. */
const NO_LINKS = new Set(["EPERM", "ENOTSUP", "EOPNOTSUPP", "ENOSYS", "EXDEV", "EMLINK"]);

/** Gives `temp` the name `target` unless something is there; true when it did. */
function linkInto(temp: string, target: string): boolean {
  try {
    linkSync(temp, target);
    return true;
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code ?? "";
    if (code === "EEXIST") return false;
    if (!NO_LINKS.has(code)) throw error;
    if (identityAt(target) !== null) return false;
    renameSync(temp, target);
    return true;
  }
}

/**
 * Writes a new file in `dir` under the first free name of `nameFor(1)`, `nameFor(2)`, …: temp file, fsync, link
 * into place, fsync of the directory. Never replaces a file. Returns the name it got once the file is durable.
 */
export function writeNewFile(dir: string, nameFor: (n: number) => string, content: string, maxTries = 9999, syncDir = true): string {
  ensurePeerDir(dir);
  const temp = join(dir, tempName());
  const fd = openSync(temp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW, PEER_FILE_MODE);
  try {
    try {
      writeFully(fd, Buffer.from(content, "utf8"));
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
    for (let n = 1; n <= maxTries; n++) {
      const name = nameFor(n);
      if (linkInto(temp, join(dir, name))) {
        if (syncDir) syncDirectory(dir);
        return name;
      }
    }
    const taken = `${nameFor(1)} and ${maxTries - 1} more`;
    throw new AgentmailError("conflict", `every name for the new file in ${dir} is taken (${taken}); move old files away`);
  } finally {
    rmSync(temp, { force: true });
  }
}

/**
 * Writes `content` as `dir/name` only if nothing is there; false when something is (nothing is written then).
 * With `syncDir` false the caller fsyncs the directory (after a step that must follow the link at once).
 */
export function writeFileIfAbsent(dir: string, name: string, content: string, syncDir = true): boolean {
  try {
    writeNewFile(dir, () => name, content, 1, syncDir);
    return true;
  } catch (error) {
    if (error instanceof AgentmailError && error.code === "conflict") return false;
    throw error;
  }
}

/**
 * Moves a file that was read (and is still `identity`) into `dir`, under its own name or, when a different file
 * holds that name, `<stem>.<n>.md`. A file that is already there with the same content (the peer's archive-first
 * copy, or this move's own earlier try) just lets the source go. Returns false when the source is no longer the
 * file that was read (it is then left alone). Directories are not fsynced here: `touched` collects them.
 */
export function moveAside(source: string, identity: Identity, contentSha: string, dir: string, touched: Set<string>): boolean {
  const now = identityAt(source);
  if (now === null) return true;
  if (!sameIdentity(now, identity)) return false;
  ensurePeerDir(dir);
  const name = basename(source);
  const stem = name.replace(/\.md$/, "");
  for (let n = 1; ; n++) {
    const target = join(dir, n === 1 ? name : `${stem}.${n}.md`);
    if (linkInto(source, target)) break;
    const there = identityAt(target);
    if (there && there.ino === identity.ino && there.dev === identity.dev) break;
    if (there && there.size === identity.size && shaOf(target) === contentSha) break;
    if (n > 9999) throw new AgentmailError("conflict", `cannot find a free name for ${name} in ${dir}; move old files away`);
  }
  removeIfStill(source, identity);
  touched.add(dir);
  touched.add(dirname(source));
  return true;
}

/** Removes `path` if it is still the file that was read; a file replaced meanwhile is a new message, left alone. */
export function removeIfStill(path: string, identity: Identity): boolean {
  const now = identityAt(path);
  if (now === null) return true;
  if (!sameIdentity(now, identity)) return false;
  try {
    unlinkSync(path);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "ENOENT") throw error;
  }
  return true;
}

function shaOf(path: string): string | null {
  try {
    const file = readPeerFile(path, Number.MAX_SAFE_INTEGER);
    return file?.sha256 ?? null;
  } catch {
    return null;
  }
}

export function syncDirectories(dirs: Iterable<string>): void {
  for (const dir of dirs) syncDirectory(dir);
}

/**
 * Names that become one component of a path in a peer's directory (a FEAT-124 mailbox, a Roo slug, a D-Mail
 * endpoint). They come from command lines, frontmatter and directory listings, so they are hostile: a name that could
 * leave the bridge directory, hide among agentmail's own dot-files or carry control characters is refused.
 */
const MAX_NAME_BYTES = 200;
const FORBIDDEN = /[/\\\u0000-\u001f\u007f-\u009f]/;

/** Why `name` cannot be a path component in a peer directory, or null when it can. */
export function peerNameProblem(name: string): string | null {
  if (name === "") return "it is empty";
  if (name === "." || name === "..") return `'${name}' is not a name`;
  if (FORBIDDEN.test(name)) return "it holds '/', '\\' or a control character";
  if (name.startsWith(".")) return "it starts with '.' (hidden names are agentmail's own temporary files)";
  if (new TextEncoder().encode(name).length > MAX_NAME_BYTES) return `it is over ${MAX_NAME_BYTES} bytes`;
  return null;
}

/** `name` when it is safe as one path component; otherwise an `invalid_name` error naming `what` it was for. */
export function checkPeerName(name: string, what: string): string {
  const problem = peerNameProblem(name);
  if (problem) {
    throw new AgentmailError("invalid_name", `invalid ${what} '${displayName(name)}': ${problem}; use a plain name such as worker-7`);
  }
  return name;
}

const UNSAFE_IN_FILE_NAME = /[/\\%\u0000-\u001f\u007f-\u009f]/g;

/**
 * A piece of a file name built from a hostile value (a sender's window name): '/', '\', '%' and control characters
 * are percent-encoded, so the piece stays inside one component; spaces and Unicode are kept for the reader.
 */
export function fileNamePiece(value: string, maxBytes = 80): string {
  const encoded = value.replace(UNSAFE_IN_FILE_NAME, (char) => "%" + char.charCodeAt(0).toString(16).toUpperCase().padStart(2, "0"));
  const bytes = new TextEncoder().encode(encoded);
  if (bytes.length <= maxBytes) return encoded;
  let cut = "";
  for (const char of encoded) {
    if (new TextEncoder().encode(cut + char).length > maxBytes) break;
    cut += char;
  }
  return cut;
}
