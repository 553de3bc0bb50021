/** `watch --once` (one snapshot: the agents and the newest mail) and `watch --json` (the room's events, one a line). */
import { renderLine, type Line } from "../output/screen.ts";
import { printJson } from "../output/streams.ts";
import type { Room } from "../room/room.ts";
import { agentLines, feedLine, headerLine, ruleLine, type Header } from "./view.ts";

/** The snapshot as text, `width` columns wide, coloured only when asked. */
export function snapshotText(room: Room, header: Header, limit: number, width: number, colour: boolean): string {
  const now = new Date();
  const agents = room.agents();
  const feed = room.latest(limit);
  const lines: Line[] = [
    headerLine(header, agents.length),
    ...agentLines(agents, agents.length + 1, now),
    ruleLine({}, feed.length, width),
  ];
  for (const item of feed) lines.push(feedLine(item, false, width, now));
  return lines.map((line) => `${renderLine(line, width, colour).trimEnd()}\n`).join("");
}

/** The snapshot as `watch --once --json` prints it. */
export function snapshotJson(room: Room, header: Header, limit: number): object {
  return { store: header.store, human: header.human, agents: room.agents(), feed: room.latest(limit) };
}

/**
 * Streams the room's events as JSON lines, starting with the agents, until `stop` resolves. A store that cannot be
 * read ends it with the error (a script restarts it), unlike the live views, which say so and look again.
 */
export async function streamEvents(room: Room, stop: Promise<void>, lookMs: number): Promise<void> {
  let stopped = false;
  void stop.then(() => {
    stopped = true;
  });
  printJson({ event: "agents", agents: room.agents() });
  while (!stopped) {
    await Promise.race([room.wait(lookMs), stop]);
    if (stopped) break;
    for (const event of await room.step()) printJson(event);
  }
}
