/** What every view reads (the room as the server last said) and what it may do (the page's writes and navigation). */
import type { AgentRow, MailRow } from "../../room/model.ts";

export interface PageState {
  store: string;
  human: string | null;
  readOnly: boolean;
  agents: AgentRow[];
  feed: MailRow[];
  connected: boolean;
}

export type StatusKind = "ok" | "error" | "info";

export interface PageActions {
  /** A write whose answer is only shown (acknowledge, archive): the status line says how it went, the view is drawn again. */
  act(path: string, body: unknown): void;
  /** A write whose answer the caller uses; throws with the server's message. */
  post<T>(path: string, body: unknown): Promise<T>;
  /** Shows another view (`#/…`). */
  go(hash: string): void;
  setStatus(text: string, kind?: StatusKind): void;
}
