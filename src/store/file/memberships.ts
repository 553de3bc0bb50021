/**
 * Groups and roles: named lists of agent names, kept in the store so every worktree sees them. Each kind is one
 * small JSON file (`<root>/.groups.json`, `<root>/.roles.json`: names starting with a dot are out of the mailbox
 * namespace), changed only under its lock and replaced atomically, so a reader sees the old or the new lists and
 * two concurrent changes never lose one another.
 */
import { mkdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { AgentmailError } from "../../mail/errors.ts";
import { replaceFile } from "../durable/files.ts";
import { withLock } from "../durable/lock.ts";

export type MembershipKind = "groups" | "roles";

/** Name → members, in the order they joined. A Map: names are hostile (`__proto__` is just a name). */
export type Memberships = Map<string, string[]>;

export const membershipPath = (root: string, kind: MembershipKind) => join(root, `.${kind}.json`);

function parse(text: string, path: string): Memberships {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    value = undefined;
  }
  if (value === null || typeof value !== "object" || Array.isArray(value)) {
    throw new AgentmailError("io", `${path} is not a JSON object of name lists; fix it, or remove it to start over`);
  }
  const lists: Memberships = new Map();
  for (const [name, members] of Object.entries(value as Record<string, unknown>)) {
    if (!Array.isArray(members) || !members.every((member) => typeof member === "string")) {
      throw new AgentmailError(
        "io",
        `${path} holds something that is not a list of names under one key; fix it, or remove it to start over`,
      );
    }
    lists.set(name, [...new Set(members as string[])]);
  }
  return lists;
}

/** The lists as stored; none when the file does not exist. A file that does not parse is an error naming it. */
export function readMemberships(root: string, kind: MembershipKind): Memberships {
  const path = membershipPath(root, kind);
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return new Map();
    throw error;
  }
  return parse(text, path);
}

function serialize(lists: Memberships): string {
  const object: Record<string, string[]> = Object.create(null);
  for (const [name, members] of [...lists].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) object[name] = members;
  return JSON.stringify(object, null, 1) + "\n";
}

/**
 * Changes the lists under the lock: `change` gets the current lists and edits them in place (or throws, which
 * changes nothing). Lists left empty are dropped. Returns what `change` returned.
 */
export async function updateMemberships<T>(root: string, kind: MembershipKind, change: (lists: Memberships) => T): Promise<T> {
  mkdirSync(root, { recursive: true, mode: 0o700 });
  const path = membershipPath(root, kind);
  return withLock(`${path}.lock`, () => {
    const lists = readMemberships(root, kind);
    const before = serialize(lists);
    const result = change(lists);
    for (const [name, members] of lists) if (members.length === 0) lists.delete(name);
    const after = serialize(lists);
    if (after !== before) replaceFile(path, after);
    return result;
  });
}
