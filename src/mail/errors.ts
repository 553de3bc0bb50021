import { NEXT_STEPS, withStep, type NextStep, type Surface } from "./next-steps.ts";

/**
 * Every failure the user can see is an AgentmailError: it carries the exit code of our contract,
 * a stable machine-readable code (for --json), and a message that says what to do next.
 */
export const EXIT_OK = 0;
export const EXIT_FAILURE = 1;
export const EXIT_NOT_IN_TMUX = 2;
/** `send --wait-for`: the message was stored (its id printed) but did not reach the state: timed out, or bounced. */
export const EXIT_NOT_REACHED = 3;

export type ErrorCode =
  | "usage"
  | "not_in_tmux"
  | "unknown_recipient"
  | "ambiguous_recipient"
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
  | "claimed"
  | "duplicate_name"
  | "name_taken"
  | "name_mismatch"
  | "moved"
  | "internal";

export class AgentmailError extends Error {
  readonly code: ErrorCode;
  readonly exitCode: number;
  /** What went wrong, without the next step: set when the step is worded per interface (see next-steps.ts). */
  readonly reason: string;
  readonly next: NextStep | undefined;

  /** `message` is the whole text; with `next` it is the reason, and the CLI's wording of the step is appended. */
  constructor(
    code: ErrorCode,
    message: string,
    exitCode: number = code === "not_in_tmux" ? EXIT_NOT_IN_TMUX : EXIT_FAILURE,
    next?: NextStep,
  ) {
    super(next ? withStep(message, NEXT_STEPS[next].cli) : message);
    this.name = "AgentmailError";
    this.code = code;
    this.exitCode = exitCode;
    this.reason = message;
    this.next = next;
  }

  /** The message as the given interface shows it: the same reason, the next step in that interface's terms. */
  wordedFor(surface: Surface): string {
    return this.next ? withStep(this.reason, NEXT_STEPS[this.next][surface]) : this.message;
  }
}

/** An error whose next step each interface words its own way: `message` (the CLI's) is `reason; <CLI step>`. */
export function errorWithNextStep(code: ErrorCode, reason: string, next: NextStep): AgentmailError {
  return new AgentmailError(code, reason, undefined, next);
}

export function usageError(message: string): AgentmailError {
  return new AgentmailError("usage", message);
}

export function notInTmux(message: string, next?: NextStep): AgentmailError {
  return new AgentmailError("not_in_tmux", message, EXIT_NOT_IN_TMUX, next);
}

/** Turns anything thrown into an AgentmailError without losing the original text. */
export function toAgentmailError(error: unknown): AgentmailError {
  if (error instanceof AgentmailError) return error;
  const errno = (error as NodeJS.ErrnoException | undefined)?.code;
  const text = error instanceof Error ? error.message : String(error);
  if (errno) return new AgentmailError("io", `${text}; check the mail store's permissions and free space`);
  return new AgentmailError("internal", `${text}; this is a bug in agentmail, please report it`);
}
