/**
 * The copy plan: from parsed addresses to the mailboxes a message is copied into (one copy each), without I/O: every address is checked before
 * anything is stored, so one unknown name means nothing is sent. A recipient reached twice gets one copy; the
 * sender gets none of a list, a group or @all (a message addressed to the sender alone still reaches it).
 */
import type { Address } from "./addresses.ts";
import { AgentmailError, errorWithNextStep, usageError } from "./errors.ts";
import { displayName } from "./names.ts";
import { closestNames } from "./suggest.ts";

export interface Window {
  name: string;
  you: boolean;
  /** tmux chose the name: it changes with the program running in the window. */
  auto: boolean;
}

/** What addresses are resolved against; groups and roles are read only when an address needs them. */
export interface AddressBook {
  caller: string;
  /** The windows that can be written to (ignored ones left out), the caller's included. */
  windows: readonly Window[];
  groups(): ReadonlyMap<string, readonly string[]>;
  roles(): ReadonlyMap<string, readonly string[]>;
}

export interface CopyPlan {
  /** Agents' mailboxes, each once, in the order first addressed. */
  agents: string[];
  /** Role queues, each once. */
  roles: string[];
  /** What the sender should hear about (names tmux chose, windows @all left out), already worded. */
  warnings: string[];
}

const quoted = (name: string) => `"${displayName(name)}"`;

/**
 * An unknown recipient, with the closest names worth suggesting: never the caller itself (writing to yourself is
 * rarely what a typo meant) and never a blank name (which reads as no suggestion at all).
 */
export function unknownRecipient(recipient: string, windows: readonly Window[]): AgentmailError {
  const candidates = windows.filter((entry) => !entry.you && entry.name.trim() !== "").map((entry) => entry.name);
  const closest = closestNames(recipient, candidates);
  const hint = closest.length > 0 ? `; did you mean ${closest.map(quoted).join(", ")}?` : "";
  const reason = `no window named ${quoted(recipient)} in this tmux session${hint}`;
  return errorWithNextStep("unknown_recipient", reason, "listRecipients");
}

function unknownGroup(name: string, known: readonly string[]): AgentmailError {
  const closest = closestNames(name, known);
  const hint = closest.length > 0 ? `; did you mean ${closest.map((each) => quoted(`@${each}`)).join(", ")}?` : "";
  return errorWithNextStep("unknown_recipient", `no group named ${quoted(name)}${hint}`, "listGroups");
}

/**
 * A role no one has joined: most likely a typo of one that has members, which is then suggested; otherwise the
 * role is new, and someone has to join it first.
 */
function roleWithoutMembers(role: string, roles: ReadonlyMap<string, readonly string[]>): AgentmailError {
  const staffed = [...roles].filter(([name, members]) => name !== role && members.length > 0).map(([name]) => name);
  const closest = closestNames(role, staffed);
  if (closest.length > 0) {
    const suggestions = closest.map((each) => quoted(`role:${each}`)).join(", ");
    return errorWithNextStep("unknown_recipient", `role ${quoted(role)} has no members; did you mean ${suggestions}?`, "listRoles");
  }
  return new AgentmailError(
    "unknown_recipient",
    `role ${quoted(role)} has no members, so no one would take the message; members join it with: agentmail join ${role}`,
  );
}

export function autoNameWarning(name: string): string {
  return (
    `${quoted(name)} is a name tmux chose (it follows the program running in that window) and will change; ` +
    `mail sent to it waits under the old name. To keep it, run in that window: agentmail name <name>`
  );
}

/** The mailboxes `addresses` reach from `book`'s caller; throws, naming the first address it cannot place (then nothing is stored). */
export function planCopies(addresses: readonly Address[], book: AddressBook): CopyPlan {
  const windows = new Map<string, AddressBook["windows"][number]>();
  for (const window of book.windows) windows.set(window.name, window);
  const explicit: string[] = [];
  const expanded: string[] = [];
  const roles: string[] = [];
  const skipped: string[] = [];
  const autoNamed = new Set<string>();

  const member = (name: string, fixIfMissing: () => AgentmailError) => {
    const window = windows.get(name);
    if (!window) throw fixIfMissing();
    if (window.auto && !window.you) autoNamed.add(name);
    return name;
  };

  for (const address of addresses) {
    switch (address.kind) {
      case "agent":
        explicit.push(member(address.name, () => unknownRecipient(address.name, book.windows)));
        break;
      case "all":
        for (const window of book.windows) {
          if (window.you) continue;
          if (window.auto) skipped.push(window.name);
          else expanded.push(window.name);
        }
        break;
      case "group": {
        const groups = book.groups();
        const members = groups.get(address.name);
        if (!members) throw unknownGroup(address.name, [...groups.keys()]);
        for (const name of members) {
          const fix = `remove it: agentmail group remove ${address.name} ${name}`;
          const gone = () =>
            new AgentmailError(
              "unknown_recipient",
              `group ${quoted(address.name)} has member ${quoted(name)}, which is no window of this tmux session; ${fix}`,
            );
          expanded.push(member(name, gone));
        }
        break;
      }
      case "role": {
        const all = book.roles();
        const members = all.get(address.role);
        if (!members || members.length === 0) throw roleWithoutMembers(address.role, all);
        if (members.every((name) => name === book.caller)) {
          throw new AgentmailError(
            "unknown_recipient",
            `you are the only member of role ${quoted(address.role)}; another agent must join it first: agentmail join ${address.role}`,
          );
        }
        roles.push(address.role);
        break;
      }
      case "bridge":
        throw usageError(
          `"${displayName(address.scheme)}:" is no address scheme agentmail knows; use a window name, @all, @GROUP or role:ROLE`,
        );
    }
  }

  const unique = [...new Set([...explicit, ...expanded])];
  const uniqueRoles = [...new Set(roles)];
  // The sender never gets its own copy of a list, a group or @all; addressed alone, it writes to itself.
  const alone = unique.length === 1 && uniqueRoles.length === 0 && expanded.length === 0;
  const agents: string[] = [];
  for (const name of unique) if (alone || name !== book.caller) agents.push(name);
  if (agents.length === 0 && uniqueRoles.length === 0) {
    const why = skipped.length > 0 ? "every other window's name was chosen by tmux" : "no other agent window is addressed";
    throw errorWithNextStep("unknown_recipient", `no one to send to: ${why}`, "listRecipients");
  }
  const warnings: string[] = [];
  for (const name of agents) if (autoNamed.has(name)) warnings.push(autoNameWarning(name));
  if (skipped.length > 0) {
    const names = [...new Set(skipped)].map(quoted).join(", ");
    warnings.push(
      `@all left out windows whose name tmux chose, which change with their program: ${names}; ` +
        "to reach one, run in it: agentmail name <name>",
    );
  }
  return { agents, roles: uniqueRoles, warnings };
}
