import { ignoredNames } from "../store/ignore.ts";
import { mailRoot } from "../store/paths.ts";
import { resolveCaller, type Caller } from "../tmux/caller.ts";

type Env = Record<string, string | undefined>;

/** Where an action runs: the caller's working directory and environment (the CLI's own, or an MCP client's). */
export interface Place {
  cwd: string;
  env: Env;
}

export const here = (): Place => ({ cwd: process.cwd(), env: process.env });

export interface Agent {
  root: string;
  caller: Caller;
}

/** The mail root and the caller's identity: what every mail action needs first. */
export async function whoAmI(place: Place): Promise<Agent> {
  const caller = await resolveCaller(place.env);
  return { root: mailRoot(place.cwd, place.env), caller };
}

export interface Recipient {
  name: string;
  you: boolean;
}

/** The windows of the caller's session that can be written to: `.agentmailignore` hides others, never the caller. */
export function recipientsOf(caller: Caller, place: Place): Recipient[] {
  const ignored = ignoredNames(place.cwd, place.env);
  const seen = new Set<string>();
  const recipients: Recipient[] = [];
  for (const window of caller.windows) {
    const you = window.id === caller.windowId;
    if ((!you && ignored.has(window.name)) || seen.has(window.name)) continue;
    seen.add(window.name);
    recipients.push({ name: window.name, you });
  }
  return recipients;
}
