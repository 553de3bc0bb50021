import { shellQuote } from "../../mail/next-steps.ts";
import { keptStore, keptStoreKey } from "../kept-stores.ts";
import { HOSTNAME } from "../durable/process-identity.ts";
import { findRepository, localRoot } from "../paths.ts";
import { parseTimeout } from "./connection.ts";
import { resolveNamespace } from "./namespace.ts";
import { RedisStore } from "./redis-store.ts";
import { parseServerUrl } from "./url.ts";

interface Invocation {
  cwd: string;
  env: Record<string, string | undefined>;
}

/**
 * The Redis store AGENTMAIL_URL names (open.ts loads this module only when it is set): AGENTMAIL_NAMESPACE, else the
 * origin remote of the repository around `cwd`, names the team's mail space; AGENTMAIL_HOST (else the machine's name)
 * this host; AGENTMAIL_REDIS_TIMEOUT how long to wait for the server (2 s). Bad settings fail here with what to set.
 * No connection is opened: the first command connects, with no round trip of its own, and fails within the timeout
 * (`cannot reach the mail server at <url without password>: <reason>`, exit 1) when the server cannot be reached.
 */
export async function openRedisStore(invocation: Invocation, { evenIfMoved = false } = {}): Promise<RedisStore> {
  const { cwd, env } = invocation;
  const address = parseServerUrl(env.AGENTMAIL_URL ?? "");
  const timeoutMs = parseTimeout(env.AGENTMAIL_REDIS_TIMEOUT);
  // The repository is looked for only when no namespace is given.
  const commonDir = env.AGENTMAIL_NAMESPACE?.trim() ? null : (findRepository(cwd, env)?.commonDir ?? null);
  const namespace = resolveNamespace(env, commonDir);
  // Pointing another command here takes what this one was given: the URL, and the namespace only when it was set.
  const withPassword = address.password ? " (with the server's password in the URL)" : "";
  const given = env.AGENTMAIL_NAMESPACE?.trim() ? ` AGENTMAIL_NAMESPACE=${shellQuote(namespace)}` : "";
  const pointer = `export AGENTMAIL_URL=${shellQuote(address.display)}${given}${withPassword}`;
  return new RedisStore({
    address,
    namespace,
    timeoutMs,
    host: env.AGENTMAIL_HOST?.trim() || HOSTNAME,
    evenIfMoved,
    pointer,
    localRoot: () => localRoot(cwd, env),
    // Another namespace, with this store's settings (AGENTMAIL_DIR names this repository's local directory, not its).
    namespaceStore: (key) => keptRedisStore({ cwd, env: { ...env, AGENTMAIL_NAMESPACE: key, AGENTMAIL_DIR: undefined } }),
  });
}

/** The Redis store an invocation means, kept open for the rest of the process (kept-stores.ts). */
const keptRedisStore = (invocation: Invocation): Promise<RedisStore> =>
  keptStore(keptStoreKey(invocation), () => openRedisStore(invocation)) as Promise<RedisStore>;
