/** Times and states as the page words them. Pure. */
import type { Delivery } from "../../room/model.ts";

const pad = (value: number) => String(value).padStart(2, "0");

/** `12:03:04` today, `2026-01-31 12:03:04` before, `?` without a usable time: the browser's local time. */
export function clock(iso: string | null, now = new Date()): string {
  const time = iso === null ? Number.NaN : Date.parse(iso);
  if (!Number.isFinite(time)) return "?";
  const date = new Date(time);
  const hm = `${pad(date.getHours())}:${pad(date.getMinutes())}:${pad(date.getSeconds())}`;
  return date.toDateString() === now.toDateString() ? hm : `${date.getFullYear()}-${pad(date.getMonth() + 1)}-${pad(date.getDate())} ${hm}`;
}

/** `12s ago`, `3m ago`, `5h ago`, `2d ago`; `-` without a usable time. */
export function ago(iso: string | null, now = Date.now()): string {
  const time = iso === null ? Number.NaN : Date.parse(iso);
  if (!Number.isFinite(time)) return "-";
  const seconds = Math.max(0, Math.round((now - time) / 1000));
  if (seconds < 60) return `${seconds}s ago`;
  if (seconds < 3600) return `${Math.floor(seconds / 60)}m ago`;
  if (seconds < 172800) return `${Math.floor(seconds / 3600)}h ago`;
  return `${Math.floor(seconds / 86400)}d ago`;
}

/** A copy's state as one word: its delivery state, or `archived`. */
export const stateOf = (copy: { archived: boolean; delivery: Delivery }): string => (copy.archived ? "archived" : copy.delivery.state);
