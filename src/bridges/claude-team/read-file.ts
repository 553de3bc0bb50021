/**
 * Reading a team file (config.json, an inbox, a session file) whole: never through a symlink, never waiting on a
 * FIFO, never more than a bound. The files are Claude Code's, and a team directory is the user's, but what lies in it
 * is still input: a planted link must not make agentmail read or rewrite another file.
 */
import { closeSync, fstatSync } from "node:fs";
import { readRange } from "../../store/durable/files.ts";
import { openInPeerDir } from "../files.ts";
import { malformed } from "../formats/frontmatter.ts";

const utf8 = new TextDecoder("utf-8", { fatal: true });

/** The file's text, or null when it does not exist; a Malformed saying why when it cannot be read as one. */
export function readTeamFile(path: string, maxBytes: number): string | null {
  const fd = openInPeerDir(path, "a team directory");
  if (fd === null) return null;
  try {
    const stat = fstatSync(fd);
    if (!stat.isFile()) malformed("it is not a regular file");
    if (stat.size > maxBytes) malformed(`it is ${stat.size} bytes, over the ${maxBytes}-byte limit agentmail reads`);
    try {
      return utf8.decode(readRange(fd, 0, stat.size));
    } catch {
      return malformed("it is not UTF-8 text");
    }
  } finally {
    closeSync(fd);
  }
}
