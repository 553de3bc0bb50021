import { AgentmailError } from "./errors.ts";
import { terminalLine } from "./terminal-text.ts";

/** Longest encoded mailbox stem; keeps `<stem>.jsonl.cursor` well under the 255-byte file name limit. */
const MAX_ENCODED_LENGTH = 200;
const SAFE_BYTE = /[A-Za-z0-9_.-]/;

/**
 * Window names are hostile input. A mailbox file name is the agent name percent-encoded (UTF-8 bytes) except
 * for `[A-Za-z0-9_.-]`; a leading `.` is encoded too, so `.`, `..` and hidden names cannot occur and every
 * file the tool keeps for itself (they all start with `.`) is out of reach of any agent name.
 * The encoding is canonical, so decode(encode(x)) === x and a file is a mailbox only if it re-encodes to itself.
 */
export function encodeName(name: string): string {
  if (name.length === 0) throw new AgentmailError("invalid_name", "an agent name cannot be empty; name the tmux window");
  if (name.length <= MAX_ENCODED_LENGTH && isPlain(name)) return name;
  let out = "";
  const bytes = new TextEncoder().encode(name);
  for (let i = 0; i < bytes.length; i++) {
    const byte = bytes[i]!;
    const char = String.fromCharCode(byte);
    if (byte < 0x80 && SAFE_BYTE.test(char) && !(i === 0 && char === ".")) out += char;
    else out += "%" + byte.toString(16).toUpperCase().padStart(2, "0");
  }
  if (out.length > MAX_ENCODED_LENGTH) {
    throw new AgentmailError(
      "invalid_name",
      `the agent name "${displayName(name)}" is too long for a mailbox; rename the tmux window to something shorter`,
    );
  }
  return out;
}

const PLAIN = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_.-";

/** A name that encodes to itself: only `[A-Za-z0-9_.-]`, not starting with `.` (most names). */
function isPlain(name: string): boolean {
  if (name[0] === ".") return false;
  for (let i = 0; i < name.length; i++) if (!PLAIN.includes(name[i]!)) return false;
  return true;
}

/** The agent name a mailbox stem stands for, or null when the stem is not one encodeName would produce. */
export function decodeName(stem: string): string | null {
  let name: string;
  try {
    name = decodeURIComponent(stem);
  } catch {
    return null;
  }
  try {
    return encodeName(name) === stem ? name : null;
  } catch {
    return null;
  }
}

/** A name fit for one line of terse output, safe on a terminal: see terminalLine. */
export function displayName(name: string): string {
  return terminalLine(name);
}
