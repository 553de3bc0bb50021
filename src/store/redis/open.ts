/** Placeholder so the seam compiles; the Redis helper's branch provides the real opener. */
import { AgentmailError } from "../../core/errors.ts";
import type { Store } from "../store.ts";

export async function openRedisStore(_invocation: { cwd: string; env: Record<string, string | undefined> }): Promise<Store> {
  throw new AgentmailError("usage", "AGENTMAIL_URL is set, but the Redis mail store is not available in this build; unset AGENTMAIL_URL");
}
