/**
 * Which store a command uses, the one place that chooses the engine: the Redis store at AGENTMAIL_URL when it is set
 * (loaded only then), else the file store in the repository's git dir (or AGENTMAIL_DIR). A Redis store is kept open
 * for the rest of the process (one connection for every call of an MCP server or a mailman) and closed by
 * closeStores when the command ends. What differs between the engines, the rest of agentmail asks the Store
 * (store.ts), or, before a store is opened, the questions below: never the engine itself.
 */
import { FileStore } from "./file/file-store.ts";
import { keptStore, keptStoreKey } from "./kept-stores.ts";
import { findRepository, mailRoot, type Repository } from "./paths.ts";
import type { ServerStore } from "./server.ts";
import type { NameClaims, Store } from "./store.ts";

type Env = Record<string, string | undefined>;

interface Invocation {
  cwd: string;
  env: Env;
}

/**
 * Whether the store an invocation means is shared across hosts (a server: AGENTMAIL_URL), rather than a repository's
 * directory on this host; the same as the opened store's Store.sharedAcrossHosts, told without opening it.
 */
export const sharedAcrossHosts = (env: Env): boolean => Boolean(env.AGENTMAIL_URL);

/** `repository`, when the caller has already looked it up, saves looking again. */
export async function openStore(invocation: Invocation, repository?: Repository | null): Promise<Store> {
  if (sharedAcrossHosts(invocation.env)) {
    return keptStore(keptStoreKey(invocation), async () => (await import("./redis/open.ts")).openRedisStore(invocation));
  }
  return new FileStore(mailRoot(invocation.cwd, invocation.env, repository));
}

/**
 * The mail server an invocation names (AGENTMAIL_URL), opened for `doctor`'s look at it, not kept: the caller closes
 * it. Null when the invocation means a repository's store, which has no server.
 */
export async function openMailServer(invocation: Invocation): Promise<ServerStore | null> {
  if (!sharedAcrossHosts(invocation.env)) return null;
  return (await import("./redis/open.ts")).openRedisStore(invocation);
}

/**
 * The store an invocation means, opened even when its mail moved (moved.ts), for `migrate`, which reads a moved store
 * and clears the note of one it moves mail back into. Not kept: the caller closes it.
 */
export async function openStoreEvenIfMoved(invocation: Invocation): Promise<Store> {
  if (sharedAcrossHosts(invocation.env)) return (await import("./redis/open.ts")).openRedisStore(invocation, { evenIfMoved: true });
  const root = mailRoot(invocation.cwd, invocation.env, undefined, { evenIfMoved: true });
  // The repository's own store needs only AGENTMAIL_URL unset; one set by AGENTMAIL_DIR is named.
  return new FileStore(root, invocation.env.AGENTMAIL_DIR ? undefined : "unset AGENTMAIL_URL");
}

/** A store that keeps AGENTMAIL_NAME claims, with them, and the top of the caller's worktree (`.agentmailignore`). */
export interface ClaimingStore {
  store: Store;
  claims: NameClaims;
  workTree: string | null;
}

/**
 * The AGENTMAIL_NAME fast path's store (identity/name-claims.ts), located with no other lookup: the store an
 * invocation means when it keeps claims; null when it keeps none (a shared store: there AGENTMAIL_NAME is checked
 * against tmux on every call).
 */
export function storeKeepingNameClaims(invocation: Invocation): ClaimingStore | null {
  if (sharedAcrossHosts(invocation.env)) return null;
  const repository = findRepository(invocation.cwd, invocation.env);
  const store = new FileStore(mailRoot(invocation.cwd, invocation.env, repository));
  return { store, claims: store.nameClaims, workTree: repository?.workTree ?? null };
}

/** The namespace a repository's agents use on a store of namespaces, or null when none can be derived for it. */
export type NamespaceOf = (repository: Repository) => string | null;

/**
 * How the store an invocation means names a repository's project, when it names projects itself: on a store of
 * namespaces (Redis) the namespace its origin remote gives (store/redis/namespace.ts); null on a store of
 * repositories (the file store), whose every repository is its own project (identity/projects.ts).
 */
export async function namespacesOf(env: Env): Promise<NamespaceOf | null> {
  if (!sharedAcrossHosts(env)) return null;
  const { resolveNamespace } = await import("./redis/namespace.ts");
  return (repository) => {
    try {
      return resolveNamespace({}, repository.commonDir);
    } catch {
      return null;
    }
  };
}
