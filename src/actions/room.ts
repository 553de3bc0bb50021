/** Opens the mail room (src/room) for the person's views: the store, and what tmux and the mailman say of each agent. */
import { paneAgent } from "../mailman/typing-gate.ts";
import { type AgentFacts, Room } from "../room/room.ts";
import { storeAt } from "../identity/caller.ts";
import { agentHost, type Invocation } from "../identity/invocation.ts";
import { foregroundOf, listAllPanes } from "../tmux/windows.ts";
import { registerHuman } from "./human.ts";
import { mailmanStatus } from "./mailman.ts";

/** How often a view renews the person's registration (cleanup's --stale-hours is counted in hours). */
const RENEW_MS = 15 * 60_000;
const renewals = new WeakMap<Room, ReturnType<typeof setInterval>>();

/** Reminder outcomes that mean the mailman reaches the agent; any other is shown as why not. */
const REACHED = new Set(["reminded", "waiting"]);

/** The agent CLI in each pane of the tmux server this runs under (none without one), and the mailman's reach. */
async function agentFacts(invocation: Invocation): Promise<AgentFacts> {
  const clis = new Map<string, string | null>();
  for (const pane of (await listAllPanes(invocation.env)) ?? []) clis.set(pane.paneId, paneAgent(foregroundOf(pane)));
  let mailman: ReturnType<typeof mailmanStatus> | null = null;
  try {
    mailman = mailmanStatus(invocation);
  } catch {
    // No store on this machine to hold a mailman (outside a repository on a Redis store): agents pull their mail.
  }
  const outcomes = new Map((mailman?.agents ?? []).map((agent) => [agent.name, agent.outcome]));
  return {
    clis,
    reach(name) {
      if (!mailman?.running) return "pull";
      const outcome = outcomes.get(name);
      return outcome === undefined || REACHED.has(outcome) ? "mailman" : `mailman: ${outcome.replaceAll("_", " ")}`;
    },
  };
}

/**
 * The room of the store this invocation means (AGENTMAIL_URL's Redis store, else the repository's file store).
 * `register`: the person comes in (a view that writes), registered so that agents can write to them; refused, before
 * anything is shown, when an agent has their name.
 */
export async function openRoom(invocation: Invocation, human: string | null, register = false): Promise<Room> {
  const store = await storeAt(invocation);
  if (register && human !== null) await registerHuman(invocation, store, human, "ready");
  const room = await Room.open(store, { human, host: agentHost(invocation.env), facts: () => agentFacts(invocation) });
  if (register && human !== null) {
    // Renewed while the view runs, so `cleanup --stale-hours` does not forget a person who is there.
    const renew = setInterval(() => void registerHuman(invocation, store, human, "ready").catch(() => {}), RENEW_MS);
    renew.unref?.();
    renewals.set(room, renew);
  }
  return room;
}

/** The person leaves the room they came into: registered offline (mail to them still lands, for the next visit). */
export async function leaveRoom(invocation: Invocation, room: Room, human: string | null): Promise<void> {
  clearInterval(renewals.get(room));
  room.close();
  if (human !== null) await registerHuman(invocation, room.store, human, "offline").catch(() => {});
}
