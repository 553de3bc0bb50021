/** One line of `doctor`'s report: a check that passed, something wrong (and the command that fixes it), a repair made, or a note. */
export type Area = "store" | "tmux" | "mailman" | "delivery" | "hooks" | "claims" | "bridges";
type Status = "ok" | "problem" | "fixed" | "note";

export interface Finding {
  area: Area;
  status: Status;
  message: string;
  /** The command (or the step) that fixes a problem; null when there is nothing to do. */
  fix: string | null;
}

export const ok = (area: Area, message: string): Finding => ({ area, status: "ok", message, fix: null });
export const note = (area: Area, message: string, fix: string | null = null): Finding => ({ area, status: "note", message, fix });
export const problem = (area: Area, message: string, fix: string | null): Finding => ({ area, status: "problem", message, fix });
export const fixed = (area: Area, message: string): Finding => ({ area, status: "fixed", message, fix: null });
