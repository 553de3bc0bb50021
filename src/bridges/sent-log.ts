/**
 * `<root>/.bridges/sent.jsonl`: one line per message agentmail wrote into a peer's directory (its id, the bridge,
 * the file's name), so a peer's reply that names the file (FEAT-124's `in_reply_to`) is threaded to that message.
 * A lookup aid only: a line that could not be written costs that mapping, never a message.
 */
import { closeSync, readFileSync } from "node:fs";
import { openForAppend, writeFully } from "../store/files.ts";
import { ensureBridgesDir, sentLogPath } from "./store-files.ts";

export interface SentLine {
  id: string;
  bridge: string;
  file: string;
  at: string;
}

export function recordSent(root: string, line: SentLine): void {
  try {
    ensureBridgesDir(root);
    const { fd } = openForAppend(sentLogPath(root));
    try {
      writeFully(fd, Buffer.from(JSON.stringify(line) + "\n", "utf8"));
    } finally {
      closeSync(fd);
    }
  } catch {
    // Only the in_reply_to mapping of a later reply depends on it.
  }
}

/** File name → message id, for the files a bridge wrote. */
export function sentFiles(root: string, bridge: string): Map<string, string> {
  const files = new Map<string, string>();
  let text: string;
  try {
    text = readFileSync(sentLogPath(root), "utf8");
  } catch {
    return files;
  }
  for (const line of text.split("\n")) {
    try {
      const entry = JSON.parse(line) as SentLine;
      if (entry.bridge === bridge && typeof entry.file === "string" && typeof entry.id === "string") files.set(entry.file, entry.id);
    } catch {
      // A torn line.
    }
  }
  return files;
}
