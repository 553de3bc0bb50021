/** Opens the mail room (src/room) for the person's views: the store, and what tmux and the mailman say of each agent. */
import { paneAgent } from "../core/typing-gate.ts";
import type { AgentFacts } from "../room/room.ts";
import { Room } from "../room/room.ts";
import { agentHost } from "../store/host.ts";
import { foregroundOf, listAllPanes } from "../tmux/windows.ts";
import { storeAt, type Invocation } from "./context.ts";
import { mailmanStatus } from "./mailman.ts";

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

/** The room of the store this invocation means (AGENTMAIL_URL's Redis store, else the repository's file store). */
export async function openRoom(invocation: Invocation, human: string | null): Promise<Room> {
  const store = await storeAt(invocation);
  return Room.open(store, { human, host: agentHost(invocation.env), facts: () => agentFacts(invocation) });
}
