/** Shared by the Redis store tests: stores on a private server, one namespace per test, and messages to send. */
import { createMessage, type Message } from "../../src/core/message.ts";
import { RedisMailStore, type RedisStoreOptions } from "../../src/store/redis/redis-store.ts";
import { parseServerUrl } from "../../src/store/redis/url.ts";

let namespaces = 0;

/** A namespace no other test uses, so tests sharing one server never see each other's mail. */
export function freshNamespace(label: string): string {
  return `test/${label}/${process.pid}/${++namespaces}`;
}

export function storeAt(url: string, namespace: string, options: Partial<RedisStoreOptions> = {}): RedisMailStore {
  return new RedisMailStore({ address: parseServerUrl(url), namespace, host: "host-a", timeoutMs: 5_000, ...options });
}

export function mail(from: string, to: string, body: string): Message {
  return createMessage(from, to, body);
}

/** Claims and acknowledges until the mailbox has nothing claimable; returns the bodies in delivery order. */
export async function drain(store: RedisMailStore, agent: string): Promise<string[]> {
  const bodies: string[] = [];
  for (;;) {
    const claim = await store.claim(agent);
    if (!claim) return bodies;
    bodies.push(claim.message.message);
    await store.acknowledge(claim);
  }
}
