import { HOSTNAME } from "../host.ts";
import { parseTimeout } from "./connection.ts";
import { resolveNamespace } from "./namespace.ts";
import { RedisMailStore, type RedisStoreOptions } from "./redis-store.ts";
import { parseServerUrl } from "./url.ts";

type Env = Record<string, string | undefined>;

/**
 * The Redis store's settings from the environment, or null when AGENTMAIL_URL is unset (the file store is used):
 * AGENTMAIL_URL (the server), AGENTMAIL_NAMESPACE (else the origin remote of the repository whose common git dir
 * is given), AGENTMAIL_REDIS_TIMEOUT (how long to wait for the server), AGENTMAIL_HOST (else the machine's name).
 * Bad settings fail here, before any connection, with what to set.
 */
export function redisSettings(env: Env, commonDir: string | null): RedisStoreOptions | null {
  const url = env.AGENTMAIL_URL;
  if (url === undefined || url.trim() === "") return null;
  return {
    address: parseServerUrl(url),
    namespace: resolveNamespace(env, commonDir),
    timeoutMs: parseTimeout(env.AGENTMAIL_REDIS_TIMEOUT),
    host: env.AGENTMAIL_HOST?.trim() || HOSTNAME,
  };
}

/** The Redis store the environment selects, or null for the file store. Opens no connection yet. */
export function openRedisStore(env: Env, commonDir: string | null): RedisMailStore | null {
  const settings = redisSettings(env, commonDir);
  return settings ? new RedisMailStore(settings) : null;
}
