/** Which mailboxes, role queues and archives a namespace of the Redis store has, sorted. */
import { isRoleAddress, roleOfAddress } from "../../mail/addresses.ts";
import type { Keyspace } from "./keyspace.ts";

const sortNames = (names: string[]) => names.sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));

async function mailboxNames(space: Keyspace): Promise<string[]> {
  return (await space.command("HKEYS", [space.key("unread")])) as string[];
}

export async function mailboxes(space: Keyspace): Promise<string[]> {
  return sortNames((await mailboxNames(space)).filter((name) => !isRoleAddress(name)));
}

export async function roleQueues(space: Keyspace): Promise<string[]> {
  const queues = (await mailboxNames(space)).filter(isRoleAddress);
  return sortNames(queues.map((name) => roleOfAddress(name)!));
}

export async function archives(space: Keyspace): Promise<string[]> {
  return sortNames((await space.command("SMEMBERS", [space.key("archived")])) as string[]);
}
