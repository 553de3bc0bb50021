/** The registry on the Redis store: agents' registrations and presence, and the other namespaces with agents. */
import type { AgentEntry, Presence, Registration, Touch } from "../store.ts";
import type { Keyspace } from "./keyspace.ts";
import { namespaceOfKey } from "./namespace.ts";
import { agentEntry, presenceHost } from "./registry.ts";
import { TOUCH, WRITE_STATUS } from "./scripts.ts";

export async function status(space: Keyspace, name: string): Promise<AgentEntry | null> {
  const json = (await space.command("HGET", [space.key("agents"), name])) as string | null;
  return json === null ? null : agentEntry(json);
}

export async function statuses(space: Keyspace): Promise<AgentEntry[]> {
  const documents = (await space.command("HVALS", [space.key("agents")])) as string[];
  const entries = documents.flatMap((json) => agentEntry(json) ?? []);
  return entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
}

/** A claim is not kept (Store.nameClaims is null): every call's AGENTMAIL_NAME is checked against tmux. */
export async function writeStatus(
  space: Keyspace,
  { name, status, pane, at: now = new Date(), pin, place }: Registration,
): Promise<AgentEntry> {
  const pinned = [pin?.window ?? "", pin?.server ?? "", pin?.host ?? ""];
  const args = [name, status, pane, now.toISOString(), space.host, ...pinned, place?.server ?? "", place?.host ?? ""];
  const json = (await space.run(WRITE_STATUS, [space.key("agents")], args)) as string;
  return agentEntry(json)!;
}

export async function removeStatus(space: Keyspace, name: string): Promise<void> {
  await space.command("HDEL", [space.key("agents"), name]);
}

export async function touch(space: Keyspace, presence: Presence, exclusiveMs = 0, takeOver = false): Promise<Touch> {
  const exclusive = String(Math.max(0, Math.floor(exclusiveMs)));
  const where = [presence.tmux?.server ?? "", presence.tmux?.host ?? "", takeOver ? "1" : ""];
  const args = [presence.name, presence.host, presence.pane, exclusive, new Date().toISOString(), ...where];
  const [accepted, json] = (await space.runChecked(TOUCH, [space.key("agents")], args)) as [number, string];
  if (accepted === 1) return { accepted: true };
  const found = agentEntry(json) ?? { name: presence.name, status: "ready", since: "", updated_at: "", pane: "" };
  const holder = { ...found, host: presenceHost(json) ?? found.host };
  return accepted === 2 ? { accepted: false, holder, liveness: true } : { accepted: false, holder };
}

/** Every other namespace on this server with registered agents, sorted (Store). One SCAN, a page at a time. */
export async function otherNamespaces(space: Keyspace): Promise<string[]> {
  const found = new Set<string>();
  let cursor = "0";
  do {
    const [next, keys] = (await space.connection.command("SCAN", [cursor, "MATCH", "agentmail:{*}:agents", "COUNT", "1000"])) as [
      string,
      string[],
    ];
    for (const key of keys) {
      const namespace = key.endsWith("}:agents") ? namespaceOfKey(key) : null;
      if (namespace !== null && namespace !== space.namespace) found.add(namespace);
    }
    cursor = String(next);
  } while (cursor !== "0");
  return [...found].sort();
}
