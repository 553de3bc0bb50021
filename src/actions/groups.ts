import { validateName } from "../mail/addresses.ts";
import { unknownRecipient } from "../mail/copy-plan.ts";
import { AgentmailError } from "../mail/errors.ts";
import { displayName } from "../mail/names.ts";
import { storeAt, whoIsCalling } from "../identity/caller.ts";
import type { Invocation } from "../identity/invocation.ts";
import { addressableWindows } from "../identity/recipients.ts";

export interface Group {
  name: string;
  members: string[];
}

const quoted = (name: string) => `"${displayName(name)}"`;

/**
 * Adds members to a group, creating it. Every member must be a window of the caller's tmux session, and the group
 * cannot take the name of a window on the tmux server; otherwise nothing changes.
 */
export async function addToGroup(invocation: Invocation, name: string, members: readonly string[]): Promise<Group> {
  validateName("group", name);
  if (members.length === 0) throw new AgentmailError("usage", "name at least one member; usage: agentmail group add <group> <member>...");
  const agent = await whoIsCalling(invocation, "mail");
  const window = agent.caller.serverWindows.find((each) => each.name === name);
  if (window)
    throw new AgentmailError(
      "conflict",
      `a window is named ${quoted(name)} (pane ${window.paneId}); a group cannot take a window's name, choose another`,
    );
  const windows = await addressableWindows(agent);
  for (const member of members) if (!windows.some((each) => each.name === member)) throw unknownRecipient(member, windows);
  return agent.store.updateMemberships("groups", (groups) => {
    const list = groups.get(name) ?? [];
    for (const member of members) if (!list.includes(member)) list.push(member);
    groups.set(name, list);
    return { name, members: [...list] };
  });
}

/** Removes members from a group (a group left empty is gone), or the whole group when no member is named. */
export async function removeFromGroup(invocation: Invocation, name: string, members: readonly string[]): Promise<Group> {
  const store = await storeAt(invocation);
  return store.updateMemberships("groups", (groups) => {
    const list = groups.get(name);
    if (!list) throw new AgentmailError("not_found", `no group named ${quoted(name)}; run 'agentmail group list' to list the groups`);
    const strangers = members.filter((member) => !list.includes(member));
    if (strangers.length > 0) {
      throw new AgentmailError(
        "not_found",
        `${strangers.map(quoted).join(", ")} not in group ${quoted(name)}, whose members are ${list.map(quoted).join(", ")}`,
      );
    }
    const left = members.length === 0 ? [] : list.filter((member) => !members.includes(member));
    groups.set(name, left);
    return { name, members: left };
  });
}

export async function listGroups(invocation: Invocation): Promise<Group[]> {
  const store = await storeAt(invocation);
  return [...(await store.memberships("groups"))].map(([name, members]) => ({ name, members })).sort((a, b) => (a.name < b.name ? -1 : 1));
}
