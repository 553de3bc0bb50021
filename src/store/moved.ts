/**
 * What a store says once `migrate` has moved its mail away, for every engine: the file store keeps it in a file
 * (`<root>/.moved`, tombstone.ts), the Redis store in a key of its namespace. While it is there every mail command
 * against the store fails with code `moved`, naming the store the mail went to and the exact step that points
 * agentmail there; so an agent left on the old store neither writes mail nobody reads nor takes mail a second time.
 */
import { AgentmailError } from "../mail/errors.ts";
import { terminalLine } from "../mail/terminal-text.ts";

export interface MovedNote {
  /** `moving`: a migrate is copying the mail now (or was stopped while it did); `moved`: it finished. */
  state: "moving" | "moved";
  /** The store the mail went to, as its label says it (store.ts): never a password. */
  to: string;
  /** The shell step that points agentmail at it: `export AGENTMAIL_URL=…`, or `unset AGENTMAIL_URL`. */
  use: string;
  /** When the migrate started (moving) or finished (moved), ISO 8601. */
  at: string;
}

/** A note as it is stored: one JSON object. */
export const serializeMovedNote = (note: MovedNote): string => JSON.stringify(note) + "\n";

/** A stored note; one that cannot be read still says the mail moved (the store must not be used), to an unknown place. */
export function parseMovedNote(text: string | null): MovedNote {
  let value: Partial<MovedNote> = {};
  try {
    value = (JSON.parse(text ?? "") as Partial<MovedNote> | null) ?? {};
  } catch {
    // Garbled: still a tombstone.
  }
  const given = (field: unknown, otherwise: string) => (typeof field === "string" && field !== "" ? field : otherwise);
  return {
    state: value.state === "moving" ? "moving" : "moved",
    to: given(value.to, "another store"),
    use: given(value.use, "point AGENTMAIL_URL (or AGENTMAIL_DIR) at the store that holds the mail now"),
    at: given(value.at, "at an unknown time"),
  };
}

/** What doctor and every refused command say of a moved store: the reason, and the step (shown on its own by doctor). */
export function movedReason(from: string, note: MovedNote): string {
  const to = terminalLine(note.to);
  const at = terminalLine(note.at);
  return note.state === "moved"
    ? `the mail of ${terminalLine(from)} moved to ${to} (agentmail migrate, ${at})`
    : `the mail of ${terminalLine(from)} is being moved to ${to} by agentmail migrate (started ${at}); wait for it to finish, or run it again if it was stopped`;
}

/** A command against a store whose mail moved: code `moved`, exit 1, and how to point agentmail at the new store. */
export class StoreMoved extends AgentmailError {
  readonly note: MovedNote;

  constructor(from: string, note: MovedNote) {
    super("moved", `${movedReason(from, note)}; point agentmail there: ${terminalLine(note.use)}`);
    this.note = note;
  }
}
