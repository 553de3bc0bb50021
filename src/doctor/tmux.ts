import type { Invocation } from "../identity/invocation.ts";
import { sortWindows } from "../identity/projects.ts";
import { sharedAcrossHosts } from "../store/open.ts";
import { findRepository } from "../store/paths.ts";
import { AgentmailError } from "../mail/errors.ts";
import { displayName } from "../mail/names.ts";
import type { AgentEntry, Store } from "../store/store.ts";
import { resolveCaller, sameNamedWindows, type Caller } from "../tmux/caller.ts";
import { note, ok, problem, type Finding } from "./finding.ts";

const quoted = (name: string) => `"${displayName(name)}"`;

/** Names that matter to this store: agents registered in it and mailboxes it holds. */
function storeNames(statuses: readonly AgentEntry[], mailboxes: readonly string[]): Set<string> {
  return new Set([...statuses.map((status) => status.name), ...mailboxes]);
}

/** The lists of one kind, or none when they cannot be read (the store check says why). */
async function listsOf(store: Store, kind: "groups" | "roles"): Promise<Map<string, string[]>> {
  try {
    return await store.memberships(kind);
  } catch {
    return new Map();
  }
}

function duplicateFindings(caller: Caller, known: Set<string>): Finding[] {
  const findings: Finding[] = [];
  for (const name of new Set(caller.serverWindows.map((window) => window.name))) {
    const holders = sameNamedWindows(caller, name);
    if (holders.length < 2) continue;
    // Several windows tmux named after one program ("bash") are harmless until someone uses that name.
    const matters = known.has(name) || holders.some((window) => !window.auto || window.sessionId === caller.sessionId);
    if (!matters) continue;
    const newest = holders[holders.length - 1]!;
    const panes = holders.map((window) => window.paneId).join(", ");
    findings.push(
      problem(
        "tmux",
        `${holders.length} windows are named ${quoted(name)} (panes ${panes}): they would share one mailbox`,
        `tmux rename-window -t ${newest.paneId} <new-name>, or in that window: agentmail name <new-name>`,
      ),
    );
  }
  return findings;
}

/**
 * The caller with this project's windows only (identity/projects.ts): same-named windows of other repositories share
 * no mailbox. On Redis, where clones of one origin are one project, every window stays.
 */
function thisProjects(invocation: Invocation, caller: Caller): Caller {
  if (sharedAcrossHosts(invocation.env)) return caller;
  try {
    return sortWindows(caller, findRepository(invocation.cwd, invocation.env), invocation.env, null).caller;
  } catch {
    return caller;
  }
}

/** tmux: reachable, who the caller is, names tmux chose and names held twice; groups whose members are gone. */
export async function tmuxFindings(invocation: Invocation, store: Store | null): Promise<Finding[]> {
  let caller: Caller;
  try {
    caller = await resolveCaller(invocation.env);
  } catch (error) {
    const message = error instanceof AgentmailError ? error.message : String(error);
    return [problem("tmux", message, null)];
  }
  caller = thisProjects(invocation, caller);
  const own = caller.windows.find((window) => window.id === caller.windowId);
  const findings: Finding[] = [ok("tmux", `you are ${quoted(caller.name)} (pane ${caller.paneId}, window ${caller.windowId})`)];
  if (own?.auto)
    findings.push(
      problem(
        "tmux",
        `your window's name ${quoted(caller.name)} was chosen by tmux and will change with the program in it`,
        "agentmail name <name>",
      ),
    );
  const statuses = store ? await store.statuses() : [];
  findings.push(...duplicateFindings(caller, storeNames(statuses, store ? await store.mailboxes() : [])));
  if (store === null) return findings;
  for (const status of statuses) {
    const window = caller.serverWindows.find((each) => each.name === status.name);
    if (window?.auto && window.id !== caller.windowId) {
      findings.push(
        problem(
          "tmux",
          `agent ${quoted(status.name)} (pane ${status.pane}) has a name tmux chose, which will change`,
          `in that window: agentmail name <name>`,
        ),
      );
    }
  }
  const groups = await listsOf(store, "groups");
  const windows = new Set(caller.windows.map((window) => window.name));
  for (const [group, members] of groups) {
    for (const member of members.filter((name) => !windows.has(name))) {
      findings.push(
        problem(
          "tmux",
          `group ${quoted(group)} has member ${quoted(member)}, which is no window of this session: send @${displayName(group)} fails`,
          `agentmail group remove ${group} ${member}`,
        ),
      );
    }
  }
  for (const [role, members] of await listsOf(store, "roles")) {
    const absent = members.filter((name) => !windows.has(name));
    if (absent.length > 0)
      findings.push(
        note(
          "tmux",
          `role ${quoted(role)} has members with no window in this session: ${absent.map(quoted).join(", ")}; the others take its mail`,
        ),
      );
  }
  return findings;
}
