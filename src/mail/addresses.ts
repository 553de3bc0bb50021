/**
 * Addresses, as `send` and the MCP `send` tool take them, parsed without I/O:
 *
 *   bob                 the agent in the window named bob (this project's; else the one other project's that has it)
 *   bob@project         the agent bob of another project: a repository's directory name or alias, a Redis namespace
 *   alice,bob,carol     several at once (also: -r alice -r bob; a JSON array in MCP)
 *   @all                every other agent window of your tmux session
 *   @reviewers          every member of the group reviewers (`agentmail group`)
 *   role:triage         one message that exactly one member of the role triage takes (`agentmail join`)
 *   <scheme>:<target>   another mail system's address (a bridge); `role:` is the only scheme agentmail has itself
 *
 * `,` separates addresses and `:` starts a scheme, so neither can be part of a name that `agentmail name`, `group`
 * or `join` accepts (see validateName).
 */
import { skeleton } from "./confusables.ts";
import { AgentmailError, usageError } from "./errors.ts";
import { displayName } from "./names.ts";

export type Address =
  | { kind: "agent"; name: string; project?: string }
  | { kind: "all" }
  | { kind: "group"; name: string }
  | { kind: "role"; role: string }
  | { kind: "bridge"; scheme: string; target: string };

const ALL = "@all";
const ROLE_SCHEME = "role";

/** `scheme:` as URIs spell one (a letter, then letters, digits, + . -): its length, or 0. */
function schemeLength(text: string): number {
  const colon = text.indexOf(":");
  if (colon < 1 || !isLetter(text[0]!)) return 0;
  for (let i = 1; i < colon; i++) {
    const char = text[i]!;
    if (!isLetter(char) && !(char >= "0" && char <= "9") && char !== "+" && char !== "." && char !== "-") return 0;
  }
  return colon;
}

const isLetter = (char: string) => (char >= "a" && char <= "z") || (char >= "A" && char <= "Z");

/** The text that addresses a role's queue. */
export const roleAddress = (role: string): string => `${ROLE_SCHEME}:${role}`;

const ROLE_PREFIX = roleAddress("");

/** Whether a mailbox is a role's queue (`role:dev`), not an agent's: the one test every store and view makes. */
export const isRoleAddress = (mailbox: string): boolean => mailbox.startsWith(ROLE_PREFIX);

/** The role whose queue a mailbox is (`role:dev` → `dev`); null for an agent's mailbox. */
export const roleOfAddress = (mailbox: string): string | null => (isRoleAddress(mailbox) ? mailbox.slice(ROLE_PREFIX.length) : null);

/** Parses one address (no commas). */
export function parseAddress(text: string): Address {
  if (text === "") throw usageError("an address is empty; give a window name, @all, @GROUP or role:ROLE");
  if (text === ALL) return { kind: "all" };
  if (text.startsWith("@")) return { kind: "group", name: checked("group", text.slice(1)) };
  const scheme = schemeLength(text);
  if (scheme > 0) {
    const prefix = text.slice(0, scheme);
    const target = text.slice(scheme + 1);
    if (prefix.toLowerCase() === ROLE_SCHEME) return { kind: "role", role: checked("role", target) };
    return { kind: "bridge", scheme: prefix.toLowerCase(), target };
  }
  const at = text.indexOf("@");
  if (at > 0) {
    const project = text.slice(at + 1);
    if (project.trim() === "") throw usageError(`"${displayName(text)}" names no project after '@'; give NAME@PROJECT, or the name alone`);
    const name = text.slice(0, at);
    const problem = addressProblem(name);
    if (problem !== null) throw new AgentmailError("invalid_name", `"${displayName(name)}" is no agent's name: ${problem}`);
    return { kind: "agent", name, project };
  }
  if (text.includes(":")) {
    throw usageError(
      `"${displayName(text)}" is no address: ':' only follows a scheme such as role: (role:ROLE); a window name cannot hold ':'`,
    );
  }
  return { kind: "agent", name: text };
}

/**
 * The sender of a message as an address to reply to: a name, or `name@project` for mail from another project (see
 * actions/send.ts). Never read as a group, a role or a bridge: it is a sender's name, not address syntax.
 */
export function senderAddress(from: string): Address {
  const at = from.indexOf("@");
  if (at <= 0 || at === from.length - 1) return { kind: "agent", name: from };
  return { kind: "agent", name: from.slice(0, at), project: from.slice(at + 1) };
}

/**
 * Every address of a list of arguments, each of which may hold several separated by commas, in the order given.
 * Nothing is deduplicated here: that happens once the addresses are resolved to mailboxes.
 */
export function parseAddresses(values: readonly string[]): Address[] {
  if (values.length === 0) throw usageError("missing recipient; give a window name, a,b,c, @all, @GROUP or role:ROLE");
  const addresses: Address[] = [];
  for (const value of values) for (const part of value.split(",")) addresses.push(parseAddress(part));
  return addresses;
}

export type NameKind = "agent" | "group" | "role";

/** Longest name, in characters: a name is an address typed by models and people, and must fit a mailbox file name. */
const MAX_NAME_CHARACTERS = 64;

/** C0 and C1 controls and DEL: they would act on a terminal, or break a line. */
const isControl = (code: number) => code < 0x20 || (code >= 0x7f && code <= 0x9f);

/** The characters (code points) of `name`, and whether one is a control. */
function characters(name: string): { count: number; control: boolean } {
  let count = 0;
  let control = false;
  for (let i = 0; i < name.length; i++) {
    const code = name.charCodeAt(i);
    control ||= isControl(code);
    // The second half of a surrogate pair is the same character.
    if (!(code >= 0xdc00 && code <= 0xdfff && i > 0 && name.charCodeAt(i - 1) >= 0xd800 && name.charCodeAt(i - 1) <= 0xdbff)) count++;
  }
  return { count, control };
}

/**
 * Why `name` cannot be an agent's, a group's or a role's name, or null when it can. The rules: not empty or blank;
 * no control characters; at most 64 characters; no leading `-` (read as an option) or `@` (a group's address); no
 * `,` or `:` (they separate and prefix addresses); no backslash (tmux shows it doubled, so the window would not
 * carry the name asked for), nor `#[` (tmux keeps it as a style, not as the text asked for).
 */
export function nameProblem(name: string): string | null {
  if (name.trim() === "") return "it is empty";
  const { count, control } = characters(name);
  if (control) return "it holds a control character";
  if (count > MAX_NAME_CHARACTERS) return `it is ${count} characters long, over the limit of ${MAX_NAME_CHARACTERS}`;
  if (name.startsWith("-")) return "it starts with '-', which reads as an option";
  const address = addressProblem(name);
  if (address !== null) return address;
  if (name.includes("@")) return "it holds '@', which addresses an agent of another project (name@project)";
  if (name.includes("\\")) return "it holds '\\', which tmux would show doubled";
  if (name.includes("#[")) return "it holds '#[', which tmux reads as a style";
  return null;
}

/**
 * The name agentmail's own mail comes from (bounces, claim notices). No agent, group or role may carry it, nor a name
 * that looks like it (mail/confusables.ts): mail from a window so named would pass for agentmail's.
 */
export const SYSTEM_NAME = "agentmail";

/** Longest name whose skeleton can still be SYSTEM_NAME: invisible characters aside, NFKC never lengthens it much. */
const MAX_LOOK_ALIKE = 64;

const isSystemName = (name: string) => name === SYSTEM_NAME || (name.length <= MAX_LOOK_ALIKE && skeleton(name) === SYSTEM_NAME);

/**
 * Why `name`, a window's, cannot stand for an agent at all, or null when it can: it would read as another address
 * (a group, a role or a bridge, or several), so a window named `role:triage` would read the role's queue and `@all`
 * would give that queue a copy; or it is agentmail's own name (SYSTEM_NAME), under which its bounces and claim notices
 * come. The part of nameProblem that identities need; a window tmux or a person named otherwise oddly (`-x`, a tab)
 * is still an agent, addressed with `--` or `-r`. Cheap: every command checks it.
 */
export function addressProblem(name: string): string | null {
  if (name.trim() === "") return "it is empty";
  if (isSystemName(name))
    return `'${SYSTEM_NAME}' is agentmail's own name (its bounces and claim notices come from it), so no agent may carry it or a name that looks like it`;
  if (name.startsWith("@")) return "it starts with '@', which addresses a group";
  if (name.includes(",")) return "it holds ',', which separates addresses";
  if (name.includes(":")) return "it holds ':', which starts an address scheme (role:ROLE)";
  return null;
}

/** Throws invalid_name when `name` cannot be a name of this kind; returns it otherwise. */
export function validateName(kind: NameKind, name: string): string {
  const problem = kind === "group" && name === "all" ? "@all already means every agent window of the session" : nameProblem(name);
  if (problem === null) return name;
  throw new AgentmailError("invalid_name", `"${displayName(name)}" cannot be ${article(kind)} name: ${problem}; choose another`);
}

function article(kind: NameKind): string {
  return kind === "agent" ? "an agent's" : kind === "group" ? "a group's" : "a role's";
}

/** Group and role names in addresses: a malformed one is an error about the address, not a missing mailbox. */
function checked(kind: "group" | "role", name: string): string {
  if (kind === "group" && name === "") throw usageError("'@' alone is no address; give @all or @GROUP");
  if (kind === "role" && name === "") throw usageError("'role:' needs a role's name: role:ROLE");
  const problem = nameProblem(name);
  if (problem !== null) throw new AgentmailError("invalid_name", `"${displayName(name)}" is no ${kind} name: ${problem}`);
  return name;
}
