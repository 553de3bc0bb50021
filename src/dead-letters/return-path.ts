/**
 * Where mail goes back to its sender (a bounce): the sender's mailbox in the store the message is in; or, for mail
 * from another project (`from` is `name@project`, actions/send-elsewhere.ts), the sender's mailbox in the very store
 * it was sent from, which the copy records (`sender_store`: the git common dir on the file store, the namespace on
 * Redis). A copy stored before copies recorded it goes back to the project of that name among the repositories the
 * tmux server's panes work in, only when exactly one has that name (two clones named alike: none is guessed); on
 * Redis the name is the namespace.
 *
 * A bounce that cannot go there (that store is gone, cannot be opened, or its mailbox cannot be written: a FIFO, a
 * full disk, no permission) is kept here, in a mailbox named for the sender's address (`alice@app`), with where it
 * is to go (`return_store`) and why it waits (`kept_because`): the take that bounced the message never fails for
 * it, so the recipient's mail flows. Each sweep of the mailman and each `cleanup` send kept bounces on (once, under a
 * take) when their store takes them; `doctor` lists those still waiting.
 */
import { isAbsolute } from "node:path";
import { senderAddress } from "../mail/addresses.ts";
import { isBounce, KEPT_BECAUSE, keptFor, RETURN_STORE, SENDER_STORE } from "../mail/bounce.ts";
import { AgentmailError, toAgentmailError } from "../mail/errors.ts";
import type { Message } from "../mail/message.ts";
import { displayName } from "../mail/names.ts";
import { projectOf, repositoryAt } from "../identity/projects.ts";
import { gitCommonDir } from "../store/git-dir.ts";
import type { Store } from "../store/store.ts";
import { listAllPanes } from "../tmux/windows.ts";

type Env = Record<string, string | undefined>;

/** The store `project`'s sender wrote from: the one the copy recorded, else the one project of that name. */
async function senderStore(store: Store, project: string, recorded: unknown, env: Env): Promise<Store> {
  const named = typeof recorded === "string" && recorded !== "" ? recorded : null;
  // On a store of namespaces (Redis) the project is its namespace, on the same server.
  if (store.namespace !== null) return store.projectStore({ key: named ?? project, repository: null });
  const commonDir = named !== null && isAbsolute(named) ? named : await onlyRepositoryNamed(project, env);
  // Only a git directory gets a store: a path recorded long ago may name nothing now, or something else.
  if (gitCommonDir(commonDir, {}, commonDir) !== commonDir) {
    throw new AgentmailError("no_store", `the store it was sent from, in ${displayName(commonDir)}, is gone (no git directory there now)`);
  }
  return store.projectStore({ key: commonDir, repository: { commonDir, workTree: null } });
}

/** For a copy that recorded no store: the git common dir of the one repository on this tmux server named `project`. */
async function onlyRepositoryNamed(project: string, env: Env): Promise<string> {
  const found = new Set<string>();
  for (const pane of (await listAllPanes(env)) ?? []) {
    const repository = pane.path === "" ? null : repositoryAt(pane.path);
    if (repository !== null && projectOf(repository).names.includes(project)) found.add(repository.commonDir);
  }
  if (found.size === 1) return [...found][0]!;
  if (found.size === 0)
    throw new AgentmailError("no_store", `no repository of a project named "${displayName(project)}" works on this tmux server now`);
  const where = [...found].map(displayName).join(", ");
  throw new AgentmailError(
    "ambiguous_recipient",
    `${found.size} repositories are named "${displayName(project)}" (${where}) and the message did not record which one it came from`,
  );
}

/**
 * Stores `bounce` (addressed to the sender's name there) in the store its sender wrote from; null once it is there,
 * else why it cannot be now.
 */
async function storeThere(store: Store, bounce: Message, project: string, recorded: unknown, env: Env): Promise<string | null> {
  try {
    await (await senderStore(store, project, recorded, env)).append(bounce);
    return null;
  } catch (error) {
    return toAgentmailError(error).message;
  }
}

/** Where a bounce went: to whom (as the report names the sender), and why it is kept here instead (null: it is not). */
export interface Returned {
  to: string;
  kept: string | null;
}

/**
 * Returns `bounce` (made for the sender's mailbox `name`, mail/bounce.ts) of `original` to its sender: in this store
 * for a sender of this project (a failure there throws: the take gives the message back), in the store it was sent
 * from for another project's, or kept here when that store cannot take it now.
 */
export async function returnBounce(
  store: Store,
  original: Message,
  bounceFor: (mailbox: string) => Message,
  env: Env = process.env,
): Promise<Returned> {
  const from = String(original.from);
  const address = senderAddress(from);
  if (address.kind !== "agent" || address.project === undefined) {
    await store.append(bounceFor(from));
    return { to: from, kept: null };
  }
  const recorded = original[SENDER_STORE];
  const kept = await storeThere(store, bounceFor(address.name), address.project, recorded, env);
  if (kept === null) return { to: from, kept: null };
  const here: Message = { ...bounceFor(from), [KEPT_BECAUSE]: kept };
  if (typeof recorded === "string" && recorded !== "") here[RETURN_STORE] = recorded;
  await store.append(here);
  return { to: from, kept };
}

/** The bounces kept here for senders of other projects, by the mailbox (the sender's address) they wait in. */
export async function keptBounces(store: Store): Promise<{ mailbox: string; bounces: Message[] }[]> {
  const kept: { mailbox: string; bounces: Message[] }[] = [];
  for (const mailbox of await store.mailboxes()) {
    if (keptFor(mailbox) === null || (await store.countUnread(mailbox)) === 0) continue;
    const bounces = (await store.unread(mailbox)).filter(isBounce);
    if (bounces.length > 0) kept.push({ mailbox, bounces });
  }
  return kept;
}

/** A kept bounce that went on to its sender's store, or one still waiting here and why. */
export interface KeptBounce {
  id: string;
  mailbox: string;
  why: string | null;
}

/** Refuses a take: the kept bounce still cannot go, and stays unread here. */
class StillKept extends Error {}

/**
 * Sends every kept bounce on to the store its sender wrote from, where that store takes it now: under a take of its
 * mailbox here (one forwarder at a time; the bounce's id is stored once there, whoever was killed halfway), then
 * archived here. Returns what went on and what still waits. A mailbox that cannot be read is passed over.
 */
export async function forwardKeptBounces(
  store: Store,
  env: Env = process.env,
): Promise<{ forwarded: KeptBounce[]; waiting: KeptBounce[] }> {
  const forwarded: KeptBounce[] = [];
  const waiting: KeptBounce[] = [];
  let kept: Awaited<ReturnType<typeof keptBounces>>;
  try {
    kept = await keptBounces(store);
  } catch {
    return { forwarded, waiting };
  }
  for (const { mailbox, bounces } of kept) {
    const { name, project } = keptFor(mailbox)!;
    for (const bounce of bounces) {
      let why: string | null = null;
      const show = async (message: Message) => {
        const onward: Message = { ...message, to: name, read_flag: false };
        const recorded = onward[RETURN_STORE];
        delete onward[RETURN_STORE];
        delete onward[KEPT_BECAUSE];
        why = await storeThere(store, onward, project, recorded, env);
        if (why !== null) throw new StillKept(why);
      };
      try {
        const taken = await store.take(mailbox, show, { prefer: (message) => message.id === bounce.id, only: true });
        if (taken === null) continue;
        await store.archive(mailbox, { ids: [bounce.id] }, false).catch(() => {});
        forwarded.push({ id: bounce.id, mailbox, why: null });
      } catch (error) {
        waiting.push({ id: bounce.id, mailbox, why: why ?? toAgentmailError(error).message });
      }
    }
  }
  return { forwarded, waiting };
}
