/** `watch --once` (one snapshot: the agents and the newest mail) and `watch --json` (the room's events, one a line). */
import { renderLine, type Line } from "../output/screen.ts";
import { printJson } from "../output/streams.ts";
import type { Room } from "../room/room.ts";
import { agentLines, claimLine, feedLine, headerLine, mailmanLine, needLine, sectionLine, type Header } from "./view.ts";

/**
 * The snapshot as text, `width` columns wide, coloured only when asked: what needs the person, the agents, the
 * claims and the mailman, the newest mail.
 */
export function snapshotText(room: Room, header: Header, limit: number, width: number, colour: boolean): string {
  const now = new Date();
  const agents = room.agents();
  const needs = room.needs();
  const claims = room.claims();
  const feed = room.latest(limit);
  const lines: Line[] = [headerLine(header, { agents: agents.length, needs: needs.length, mailman: room.mailman() })];
  if (needs.length > 0) {
    lines.push(sectionLine(`needs you (${needs.length})`, width));
    for (const need of needs) lines.push(needLine(need, false, width, now));
  }
  lines.push(...agentLines(agents, agents.length + 1, now));
  if (claims.length > 0) {
    lines.push(sectionLine(`claims (${claims.length})`, width));
    for (const claim of claims) lines.push(claimLine(claim, now));
  }
  lines.push(mailmanLine(room.mailman(), now));
  lines.push(sectionLine(`mail · newest ${feed.length} of ${room.size} copies`, width));
  for (const item of feed) lines.push(feedLine(item, false, width, now));
  return lines.map((line) => `${renderLine(line, width, colour).trimEnd()}\n`).join("");
}

/** The snapshot as `watch --once --json` prints it. */
export function snapshotJson(room: Room, header: Header, limit: number): object {
  return {
    store: header.store,
    human: header.human,
    agents: room.agents(),
    needs: room.needs(),
    claims: room.claims(),
    mailman: room.mailman(),
    feed: room.latest(limit),
  };
}

/**
 * Streams the room's events as JSON lines, starting with the agents, until `stop` resolves. A look that fails (the
 * Redis server restarting, a Sentinel failover) is reported through `onError` when its reason changes, and tried
 * again after a pause that grows (1 s, 2 s, … 30 s); the stream goes on where it was once the store answers.
 */
export async function streamEvents(
  room: Room,
  stop: Promise<void>,
  lookMs: number,
  onError: (message: string) => void = () => {},
): Promise<void> {
  let stopped = false;
  void stop.then(() => {
    stopped = true;
  });
  printJson({ event: "agents", agents: room.agents() });
  let failing: string | null = null;
  let retryMs = 0;
  while (!stopped) {
    try {
      await Promise.race([room.wait(lookMs), stop]);
      if (stopped) break;
      const events = await room.step();
      if (failing !== null) onError("the mail store answers again");
      failing = null;
      retryMs = 0;
      for (const event of events) printJson(event);
    } catch (error) {
      const message = `cannot read the mail store: ${(error as Error).message}; will retry`;
      if (message !== failing) onError(message);
      failing = message;
      retryMs = Math.min(Math.max(1_000, retryMs * 2), RETRY_MOST_MS);
      let timer: ReturnType<typeof setTimeout> | undefined;
      await Promise.race([new Promise((done) => (timer = setTimeout(done, retryMs))), stop]);
      clearTimeout(timer);
    }
  }
}

/** The longest pause between looks while the store does not answer. */
const RETRY_MOST_MS = 30_000;
