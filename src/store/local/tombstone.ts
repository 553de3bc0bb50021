/**
 * The file store's note that its mail moved (moved.ts): `<root>/.moved`, one JSON object, replaced atomically. Every
 * command finds it in the listing paths.ts makes of the store anyway; a send and a receive look again under their
 * mailbox's lock (one lstat), which is what makes the move exact (see FileStore.markMoved).
 */
import { closeSync, lstatSync, rmSync } from "node:fs";
import { join } from "node:path";
import { openForRead, readRange, replaceFile, syncDirectory } from "../durable/files.ts";
import { TOMBSTONE } from "./layout.ts";
import { parseMovedNote, serializeMovedNote, StoreMoved, type MovedNote } from "../moved.ts";

const tombstonePath = (root: string) => join(root, TOMBSTONE);

/** The note, or null when the store's mail has not moved. */
export function readTombstone(root: string): MovedNote | null {
  let file: ReturnType<typeof openForRead>;
  try {
    file = openForRead(tombstonePath(root));
  } catch {
    // Something that is not a file at its name (a directory, a link): still a tombstone, to an unknown place.
    return parseMovedNote(null);
  }
  if (!file) return null;
  try {
    return parseMovedNote(new TextDecoder().decode(readRange(file.fd, 0, Math.min(file.stat.size, 64 * 1024))));
  } finally {
    closeSync(file.fd);
  }
}

/** Throws `moved` when the store's mail moved: one lstat, cheap enough to run under a mailbox's lock. */
export function refuseIfMoved(root: string): void {
  if (lstatSync(tombstonePath(root), { throwIfNoEntry: false }) === undefined) return;
  throw new StoreMoved(root, readTombstone(root) ?? parseMovedNote(null));
}

/** Writes the note (durably), or removes it (null). */
export function writeTombstone(root: string, note: MovedNote | null): void {
  if (note) replaceFile(tombstonePath(root), serializeMovedNote(note));
  else rmSync(tombstonePath(root), { force: true });
  syncDirectory(root);
}
