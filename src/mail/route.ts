/**
 * A route into an agent: the channel its own CLI offers in a pane, found by an adapter (adapters.ts) and small
 * enough to remember (the mailman keeps the routes it verified, and `send` uses them to deliver at once). A route is
 * checked before use, never trusted: its process must still run with the start time it had.
 */
import type { ArrivalChannel } from "./arrival.ts";

export type Route =
  | {
      channel: "claude-inbox";
      pane: string;
      /** The session's own socket, from its registry entry. */
      socket: string;
      pid: number;
      procStart?: string;
      /** The session's status when found: idle, busy or waiting (a permission prompt or a held message is open). */
      status?: string;
    }
  | {
      channel: "codex-control";
      pane: string;
      /** The app-server daemon's control socket. */
      control: string;
      threadId: string;
      pid: number;
      procStart?: string;
    };

/** No route: why, and whether the agent's hooks still bring its mail (mid-turn and at the end of a turn). */
export interface NoRoute {
  reason: string;
  hooks: boolean;
}

export type Found = { route: Route } | { route: null; none: NoRoute };

/** What became of a frame sent along a route. */
export type Sent =
  | { ok: true; channel: ArrivalChannel; detail: string }
  /** `retry`: the route may work again later (a socket busy or gone for a moment); else forget it. */
  | { ok: false; reason: string; retry: boolean };
