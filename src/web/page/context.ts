/** What every view reads (the room as the server last said) and what it may do (the page's writes and navigation). */
import type { AgentRow, ClaimRow, MailmanView, MailRow, NeedRow } from "../../room/model.ts";

export interface PageState {
  store: string;
  human: string | null;
  /** Nothing may be written: `--read-only`, or the observer's link. */
  readOnly: boolean;
  /** The page was opened with the observer's link (`--observer`). */
  observer: boolean;
  agents: AgentRow[];
  feed: MailRow[];
  needs: NeedRow[];
  claims: ClaimRow[];
  mailman: MailmanView | null;
  /** Only the agents with a problem in the list. */
  problemsOnly: boolean;
  connected: boolean;
}

export type StatusKind = "ok" | "error" | "info";

export interface PageActions {
  /** A write whose answer is only shown (acknowledge, archive): the status line says how it went, the view is drawn again. */
  act(path: string, body: unknown): void;
  /** A write whose answer the caller uses; throws with the server's message. */
  post<T>(path: string, body: unknown): Promise<T>;
  /** Shows another view (`#/…`); `keepStatus`: the status line says how a write went that leads there (sent: its thread). */
  go(hash: string, keepStatus?: boolean): void;
  /** Draws the current view again (a filter of the page changed). */
  redraw(): void;
  setStatus(text: string, kind?: StatusKind): void;
}
