import { movesOf, type Message } from "../../mail/message.ts";
import { idNumber } from "./line-fields.ts";
import type { SentFile } from "./sent-index.ts";
import { holds, lineAt } from "./sent-scan.ts";
import type { OpenFiles } from "./sent-open-files.ts";

/** The message on a listed line, read through `handles`; null when it is not there (see OpenFiles) or no message. */
function messageAt(handles: OpenFiles, file: SentFile, at: number): Message | null {
  const fd = handles.fd(file);
  return fd === -1 ? null : lineAt(fd, file, at);
}

function exclude(file: SentFile, at: number): void {
  file.excluded ??= new Uint8Array(file.count);
  file.excluded[at] = 1;
}

/** A message both live and archived (a crash mid-archive) is listed once, as live. */
export function excludeArchivedLive(live: readonly SentFile[], archived: readonly SentFile[], handles: OpenFiles): void {
  const byMailbox = new Map<string, SentFile>();
  for (const file of live) byMailbox.set(file.mailbox, file);
  for (const file of archived) {
    const twin = byMailbox.get(file.mailbox);
    if (!twin || twin.count === 0 || file.count === 0) continue;
    const liveIds = twin.ids.slice(0, twin.count).sort();
    let liveTexts: Set<string> | null = null;
    for (let at = 0; at < file.count; at++) {
      const id = file.ids[at]!;
      if (!holds(liveIds, id)) continue;
      if (id > 0) exclude(file, at);
      else {
        // A hashed id: compared as text.
        liveTexts ??= hashedIdsOf(twin, handles);
        const message = messageAt(handles, file, at);
        if (message && liveTexts.has(message.id)) exclude(file, at);
      }
    }
  }
}

function hashedIdsOf(file: SentFile, handles: OpenFiles): Set<string> {
  const texts = new Set<string>();
  for (let at = 0; at < file.count; at++) {
    if (file.ids[at]! > 0) continue;
    const message = messageAt(handles, file, at);
    if (message) texts.add(message.id);
  }
  return texts;
}

/** A copy `agentmail name` moved on gives way to the moved one, so a message is listed once, where it is now. */
export function excludeMovedSources(files: readonly SentFile[], handles: OpenFiles): void {
  const sources = new Set<string>();
  const wanted = new Set<number>();
  const sourceKey = (id: string, mailbox: unknown, moves: number) => JSON.stringify([id, mailbox, moves]);
  for (const file of files) {
    for (const copy of file.moved) {
      sources.add(sourceKey(copy.id, copy.from, copy.moves - 1));
      wanted.add(idNumber(copy.id));
    }
  }
  if (sources.size === 0) return;
  for (const file of files) {
    for (let at = 0; at < file.count; at++) {
      if (!wanted.has(file.ids[at]!)) continue;
      const message = messageAt(handles, file, at);
      if (message && sources.has(sourceKey(message.id, message.to, movesOf(message)))) exclude(file, at);
    }
  }
}
