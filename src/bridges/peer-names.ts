/**
 * Names that become one component of a path in a peer's directory (a FEAT-124 mailbox, a Roo slug, a D-Mail
 * endpoint). They come from command lines, frontmatter and directory listings, so they are hostile: a name that could
 * leave the bridge directory, hide among agentmail's own dot-files or carry control characters is refused.
 */
import { AgentmailError } from "../mail/errors.ts";
import { displayName } from "../mail/names.ts";

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
