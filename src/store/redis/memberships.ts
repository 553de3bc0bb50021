/** Groups and roles on the Redis store: one document per kind, changed only if nobody changed it meanwhile. */
import type { MembershipKind, Memberships } from "../store.ts";
import type { Keyspace } from "./keyspace.ts";
import { parseLists, serializeLists } from "./lists.ts";
import { REPLACE_LISTS } from "./scripts.ts";

export async function memberships(space: Keyspace, kind: MembershipKind): Promise<Memberships> {
  const key = space.key(kind);
  return parseLists(((await space.command("GET", [key])) as string | null) ?? "", key);
}

/**
 * Reads the lists, changes them here, and stores the result only if nobody changed them meanwhile; otherwise
 * `change` runs again on what is stored now. So `change` may run more than once, and must only edit the lists.
 */
export async function updateMemberships<T>(space: Keyspace, kind: MembershipKind, change: (lists: Memberships) => T): Promise<T> {
  const key = space.key(kind);
  let stored = ((await space.command("GET", [key])) as string | null) ?? "";
  for (;;) {
    const lists = parseLists(stored, key);
    const result = change(lists);
    const [replaced, current] = (await space.run(REPLACE_LISTS, [key, space.key("lists")], [stored, serializeLists(lists)])) as [
      number,
      string?,
    ];
    if (replaced === 1) return result;
    stored = current ?? "";
  }
}
