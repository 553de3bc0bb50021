import type { Message } from "../core/message.ts";
import { countUnread, mailboxPath, takeOldestUnread, type Preference, type Show, type SkipReporter } from "../store/mailbox.ts";
import { ensureRoot, rootExists } from "../store/paths.ts";
import { watchStore } from "../store/watch.ts";
import { rolesOf } from "../store/memberships.ts";
import { queuesByAge, roleRoot } from "../store/role-mail.ts";
import { basename } from "node:path";

/** How often a waiting receive looks again even without a change event: the bound on a missed wake-up. */
const POLL_MS = 250;

/**
 * Takes the oldest unread message and hands it to `show`; the store marks it read only after `show` has returned.
 * No signal is handled: SIGTERM or SIGHUP while the output is blocked ends the process as SIGKILL would, before
 * the mark, so the message stays unread, and the lock it held names a dead pid, which the next receive breaks.
 */
export async function takeAndShow(
  root: string,
  agent: string,
  onSkip: SkipReporter,
  show: Show,
  prefer?: Preference,
): Promise<Message | null> {
  return rootExists(root) ? takeOldestUnread(root, agent, onSkip, show, prefer) : null;
}

/**
 * The agent's own mailbox first; then the queues of its roles, the one with the oldest unread message first, each
 * taken from under its own lock, so of several members receiving at once exactly one gets each role message.
 */
async function takeNext(root: string, agent: string, options: ReceiveOptions, show: Show): Promise<Message | null> {
  const own = await takeAndShow(root, agent, options.onSkip, show, options.prefer);
  if (own) return own;
  for (const queue of queuesByAge(root, rolesOf(root, agent))) {
    const message = await takeAndShow(queue.root, queue.mailbox, options.onSkip, show, options.prefer);
    if (message) return message;
  }
  return null;
}

export interface ReceiveOptions {
  onSkip: SkipReporter;
  /** Block until mail arrives: null waits forever, a number waits at most that many milliseconds. */
  waitMs?: number | null;
  /** Ends a wait early with null: an MCP client cancelled the call or went away. */
  signal?: AbortSignal;
  /** Takes the oldest unread message this accepts before older ones (hooks: urgent mail first). */
  prefer?: Preference;
  /**
   * Run under the mailbox's receive lock before a message is shown: throws when the caller no longer holds its name
   * (a claim moved meanwhile, see identity.ts), and then the message stays unread.
   */
  confirm?: () => void;
}

/**
 * The oldest unread message, shown through `show`, or null. When waiting, the watcher is set up before the first
 * look, so a message that lands between the look and the wait still wakes it; polling bounds a missed event.
 */
export async function receiveMail(root: string, agent: string, shown: Show, options: ReceiveOptions): Promise<Message | null> {
  const { confirm } = options;
  const show: Show = confirm
    ? (message) => {
        confirm();
        return shown(message);
      }
    : shown;
  if (options.waitMs === undefined) return takeNext(root, agent, options, show);
  const deadline = options.waitMs === null ? Infinity : Date.now() + options.waitMs;
  const mailbox = basename(mailboxPath(root, agent));
  const watcher = watchStore(ensureRoot(root), (name) => name === mailbox || name === ".roles.json");
  // Role queues live in a directory of their own; a role joined during the wait is found by polling.
  const roleWatcher = rolesOf(root, agent).length > 0 ? watchStore(ensureRoot(roleRoot(root)), (name) => name.endsWith(".jsonl")) : null;
  const stopWaiting = () => {
    watcher.close();
    roleWatcher?.close();
  };
  options.signal?.addEventListener("abort", stopWaiting, { once: true });
  try {
    for (;;) {
      if (options.signal?.aborted) return null;
      const message = await takeNext(root, agent, options, show);
      if (message) return message;
      const remaining = deadline - Date.now();
      if (remaining <= 0) return null;
      const wait = Math.min(POLL_MS, remaining);
      await (roleWatcher ? Promise.race([watcher.changed(wait), roleWatcher.changed(wait)]) : watcher.changed(wait));
    }
  } finally {
    options.signal?.removeEventListener("abort", stopWaiting);
    stopWaiting();
  }
}

/**
 * How many messages are unread now, so that an agent told of them receives again instead of stopping after one.
 * Asked right after a delivery it is cheap: it reads from the cursor, which that delivery has just moved.
 */
export function unreadCount(root: string, agent: string): number {
  return countUnread(root, agent);
}
