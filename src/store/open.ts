/**
 * Which store a command uses: the Redis store at AGENTMAIL_URL when it is set (loaded only then), else the file
 * store in the repository's git dir (or AGENTMAIL_DIR). A Redis store is kept open for the rest of the process
 * (one connection for every call of an MCP server or a mailman) and closed by closeStores when the command ends.
 */
import { FileStore } from "./file-store.ts";
import { keptStore } from "./kept-stores.ts";
import { localRoot, mailRoot, type Repository } from "./paths.ts";
import type { Store } from "./store.ts";

interface Invocation {
  cwd: string;
  env: Record<string, string | undefined>;
}

/** What decides which Redis store a invocation means: the server, the namespace (or the repository it comes from), the host. */
function redisKey({ cwd, env }: Invocation): string {
  return JSON.stringify([env.AGENTMAIL_URL, env.AGENTMAIL_NAMESPACE, env.AGENTMAIL_HOST, env.AGENTMAIL_REDIS_TIMEOUT, cwd]);
}

/** A store, and its directory when it is the file store (where AGENTMAIL_NAME claims live too); null on Redis. */
export interface OpenedStore {
  store: Store;
  fileRoot: string | null;
}

/** `repository`, when the caller has already looked it up, saves looking again. */
export async function openStoreAndRoot(invocation: Invocation, repository?: Repository | null): Promise<OpenedStore> {
  if (invocation.env.AGENTMAIL_URL) {
    const store = await keptStore(redisKey(invocation), async () => (await import("./redis/open.ts")).openRedisStore(invocation));
    return { store, fileRoot: null };
  }
  const root = mailRoot(invocation.cwd, invocation.env, repository);
  return { store: new FileStore(root), fileRoot: root };
}

export async function openStore(invocation: Invocation, repository?: Repository | null): Promise<Store> {
  return (await openStoreAndRoot(invocation, repository)).store;
}

/**
 * The store an invocation means, opened even when its mail moved (moved.ts), for `migrate`, which reads a moved store
 * and clears the note of one it moves mail back into. Not kept: the caller closes it.
 */
export async function openStoreEvenIfMoved(invocation: Invocation): Promise<Store> {
  if (invocation.env.AGENTMAIL_URL) return (await import("./redis/open.ts")).openRedisStore(invocation, { evenIfMoved: true });
  const root = mailRoot(invocation.cwd, invocation.env, undefined, { evenIfMoved: true });
  // The repository's own store needs only AGENTMAIL_URL unset; one set by AGENTMAIL_DIR is named.
  return new FileStore(root, invocation.env.AGENTMAIL_DIR ? undefined : "unset AGENTMAIL_URL");
}

/** The file store at a directory already located (the AGENTMAIL_NAME fast path, which needs no other lookup). */
export const fileStoreAt = (root: string): Store => new FileStore(root);

/**
 * The local mail directory that goes with `store`: the file store's own directory, else (Redis) the one the repository
 * would have, where this host's mailman files, routes and arrival windows are kept.
 */
export const localRootOf = (store: Store, invocation: Invocation): string =>
  store instanceof FileStore ? store.root : localRoot(invocation.cwd, invocation.env);
