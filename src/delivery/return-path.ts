/**
 * Where mail goes back to its sender (a bounce): the sender's mailbox in the store the message is in; or, for mail
 * from another project (`from` is `name@project`, actions/send-elsewhere.ts), the sender's mailbox in that
 * project's store: on Redis its namespace, on the file store the repository a pane of the tmux server works in whose
 * project has that name. A project that cannot be found now keeps the bounce here, under the sender's address.
 */
import { senderAddress } from "../mail/addresses.ts";
import type { Message } from "../mail/message.ts";
import { projectOf, repositoryAt } from "../identity/projects.ts";
import { openStore } from "../store/open.ts";
import type { Store } from "../store/store.ts";
import { listPanePaths } from "../tmux/windows.ts";

type Env = Record<string, string | undefined>;

export interface ReturnAddress {
  store: Store;
  /** The sender's mailbox in that store. */
  mailbox: string;
  /** The sender as the report names it. */
  shown: string;
  /** Releases a store opened for this (nothing for the message's own store). */
  close(): void;
}

export async function returnAddressOf(store: Store, message: Message, env: Env = process.env): Promise<ReturnAddress> {
  const from = String(message.from);
  const here: ReturnAddress = { store, mailbox: from, shown: from, close: () => {} };
  const address = senderAddress(from);
  if (address.kind !== "agent" || address.project === undefined) return here;
  const home = await projectStore(store, address.project, env).catch(() => null);
  return home === null ? here : { store: home, mailbox: address.name, shown: from, close: () => {} };
}

async function projectStore(store: Store, project: string, env: Env): Promise<Store | null> {
  if (store.engine === "redis")
    return openStore({ cwd: process.cwd(), env: { ...env, AGENTMAIL_NAMESPACE: project, AGENTMAIL_DIR: undefined } });
  for (const path of (await listPanePaths(env)) ?? []) {
    const repository = repositoryAt(path);
    if (repository === null || !projectOf(repository).names.includes(project)) continue;
    return openStore({ cwd: repository.workTree ?? repository.commonDir, env: {} }, repository);
  }
  return null;
}
