/** Shared by the Redis store tests: stores on a private server, one namespace per test, and messages to send. */
import { afterAll, beforeAll } from "bun:test";
import { createMessage, type Message } from "../../../../src/mail/message.ts";
import { RedisStore, type RedisStoreOptions } from "../../../../src/store/redis/redis-store.ts";
import { parseServerUrl } from "../../../../src/store/redis/url.ts";
import type { Store } from "../../../../src/store/store.ts";
import { RedisServer } from "../../../support/redis-server.ts";
import { NO_FALLBACK_MS } from "../../../support/wait.ts";

let namespaces = 0;

/** A namespace no other test uses, so tests sharing one server never see each other's mail. */
export function freshNamespace(label: string): string {
  return `test/${label}/${process.pid}/${++namespaces}`;
}

/**
 * A store on the test's server. Patient (a minute) unless the test sets its own timeout: a loaded machine answers
 * slowly, and only the tests of an unreachable server are about the timeout.
 */
export function storeAt(url: string, namespace: string, options: Partial<RedisStoreOptions> = {}): RedisStore {
  return new RedisStore({ address: parseServerUrl(url), namespace, host: "host-a", timeoutMs: 60_000, ...options });
}

/**
 * A private redis-server for the file it is called in (started before its tests, removed after), and the contracts'
 * places on it: a fresh namespace each, opened as a store at the server's url. Its lease, which also caps how long a
 * wait blocks before it looks again, is NO_FALLBACK_MS: only a bell can end a contract test's wait within its bound.
 */
export function redisContractPlaces() {
  let server: RedisServer | undefined;
  beforeAll(async () => {
    server = await RedisServer.start();
  });
  afterAll(async () => {
    await server?.remove();
  });
  return {
    get url() {
      return server!.url;
    },
    freshPlace: (label: string) => freshNamespace(label),
    namespaces: true,
    freshProject: (label: string) => {
      const namespace = freshNamespace(label);
      return { project: { key: namespace, repository: null }, place: namespace };
    },
    open: (namespace: string) => storeAt(server!.url, namespace, { leaseMs: NO_FALLBACK_MS }),
  };
}

export function mail(from: string, to: string, body: string): Message {
  return createMessage(from, to, body);
}

export async function appendAll(store: Store, messages: Message[]): Promise<void> {
  for (const message of messages) await store.append(message);
}

/** Takes until the mailbox has nothing takeable; returns the bodies in delivery order. */
export async function drain(store: Store, mailbox: string): Promise<string[]> {
  const bodies: string[] = [];
  while (await store.take(mailbox, (message) => void bodies.push(message.message)));
  return bodies;
}
