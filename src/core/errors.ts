/**
 * Every failure the user can see is an AgentmailError: it carries the exit code of our contract,
 * a stable machine-readable code (for --json), and a message that says what to do next.
 */
export const EXIT_OK = 0;
export const EXIT_FAILURE = 1;
export const EXIT_NOT_IN_TMUX = 2;

export type ErrorCode =
  | "usage"
  | "not_in_tmux"
  | "unknown_recipient"
  | "empty_message"
  | "message_too_large"
  | "invalid_message"
  | "invalid_name"
  | "no_store"
  | "unsafe_path"
  | "locked"
  | "io"
  | "not_found"
  | "conflict"
  | "duplicate_name"
  | "internal";

export class AgentmailError extends Error {
  readonly code: ErrorCode;
  readonly exitCode: number;

  constructor(code: ErrorCode, message: string, exitCode: number = code === "not_in_tmux" ? EXIT_NOT_IN_TMUX : EXIT_FAILURE) {
    super(message);
    this.name = "AgentmailError";
    this.code = code;
    this.exitCode = exitCode;
  }
}

export function usageError(message: string): AgentmailError {
  return new AgentmailError("usage", message);
}

export function notInTmux(message: string): AgentmailError {
  return new AgentmailError("not_in_tmux", message, EXIT_NOT_IN_TMUX);
}

/** Turns anything thrown into an AgentmailError without losing the original text. */
export function toAgentmailError(error: unknown): AgentmailError {
  if (error instanceof AgentmailError) return error;
  const errno = (error as NodeJS.ErrnoException | undefined)?.code;
  const text = error instanceof Error ? error.message : String(error);
  if (errno) return new AgentmailError("io", `${text}; check the mail store's permissions and free space`);
  return new AgentmailError("internal", `${text}; this is a bug in agentmail, please report it`);
}
