/**
 * A namespace on the server as each part of the Redis store reaches it (redis-store.ts): its keys (a mailbox's
 * name goes into them only encoded; scripts.ts lists them), the connection, and the check that the namespace's mail
 * has not moved, made once (one GET, or settled by the first script that checks it itself).
 */
import { encodeName } from "../../mail/names.ts";
import { parseMovedNote, StoreMoved } from "../moved.ts";
import { Connection, DEFAULT_TIMEOUT_MS, ScriptRefusal, type Script } from "./connection.ts";
import { keyPrefix } from "./namespace.ts";
import type { ServerAddress } from "./url.ts";

/**
 * How long a taken message is exclusive when its holder's death cannot be seen (it ran on another host). A receive
 * acknowledges within milliseconds; this only delays mail a receiver on another host died showing.
 */
const DEFAULT_LEASE_MS = 30_000;

/** A mailbox's keys. Its name is hostile: it goes into keys only encoded (and is refused when empty or too long). */
function mailboxKeys(prefix: string, mailbox: string) {
  const name = encodeName(mailbox);
  const key = (kind: string) => `${prefix}${kind}:${name}`;
  return {
    mail: key("mail"),
    read: key("read"),
    lease: key("lease"),
    cursor: key("cursor"),
    ids: key("ids"),
    bell: key("bell"),
    arch: key("arch"),
    archids: key("archids"),
    delivery: key("delivery"),
    announced: key("announced"),
    rbell: key("rbell"),
  };
}

export type MailboxKeys = ReturnType<typeof mailboxKeys>;

export interface KeyspaceOptions {
  address: ServerAddress;
  namespace: string;
  /** This agent host's name (AGENTMAIL_HOST, else the machine's), written into leases and the registry. */
  host: string;
  timeoutMs?: number;
  leaseMs?: number;
  /** Open a namespace whose mail moved (migrate reads it); otherwise every command fails with code `moved`. */
  evenIfMoved?: boolean;
}

export class Keyspace {
  readonly address: ServerAddress;
  readonly namespace: string;
  readonly prefix: string;
  readonly connection: Connection;
  readonly host: string;
  readonly leaseMs: number;
  /** Where the mail is, for messages: the server's URL without its password (Store.location). */
  readonly location: string;
  /** The server and the namespace, for messages (Store.label). */
  readonly label: string;
  /** Keys of the mailboxes used lately: a migration appends thousands of messages to one mailbox. */
  readonly #keyCache = new Map<string, MailboxKeys>();
  /**
   * Settled once the namespace is known not to have moved (see notMoved): by the first script that checks it
   * itself (a touch, a send, a take), else by one GET before the first other command.
   */
  #checked: Promise<void> | null;

  constructor(options: KeyspaceOptions) {
    this.address = options.address;
    this.namespace = options.namespace;
    this.prefix = keyPrefix(options.namespace);
    this.connection = new Connection(options.address, options.timeoutMs ?? DEFAULT_TIMEOUT_MS, { syncKey: this.key("sync") });
    this.host = options.host;
    this.leaseMs = options.leaseMs ?? DEFAULT_LEASE_MS;
    this.location = options.address.display;
    this.label = `${options.address.display}, namespace ${options.namespace}`;
    this.#checked = options.evenIfMoved ? Promise.resolve() : null;
  }

  key(kind: string): string {
    return `${this.prefix}${kind}`;
  }

  keys(mailbox: string): MailboxKeys {
    let keys = this.#keyCache.get(mailbox);
    if (!keys) {
      if (this.#keyCache.size >= 256) this.#keyCache.clear();
      this.#keyCache.set(mailbox, (keys = mailboxKeys(this.prefix, mailbox)));
    }
    return keys;
  }

  /** The key of a sender's index, or null for a name no mailbox could have (then no index is kept). */
  sentKey(sender: string): string | null {
    try {
      return `${this.prefix}sent:${encodeName(sender)}`;
    } catch {
      return null;
    }
  }

  /** Fails with code `moved` when the namespace's mail moved; one GET, the first time only. */
  notMoved(): Promise<void> {
    if (this.#checked === null) {
      const check = this.connection.command("GET", [this.key("moved")]).then((note: string | null) => {
        if (note !== null) throw this.moved(note);
      });
      // A failure (moved, or the server away) is looked at again by the next command.
      check.catch(() => {
        if (this.#checked === check) this.#checked = null;
      });
      this.#checked = check;
    }
    return this.#checked;
  }

  moved(note: string): StoreMoved {
    return new StoreMoved(this.label, parseMovedNote(note));
  }

  async command(name: string, args: string[]): Promise<unknown> {
    await this.notMoved();
    return this.connection.command(name, args);
  }

  async run(script: Script, keys: string[], args: string[]): Promise<unknown> {
    await this.notMoved();
    return this.connection.run(script, keys, args);
  }

  /** A script that refuses a moved namespace itself (scripts.ts notMoved), given the moved key last. */
  async runChecked(script: Script, keys: string[], args: string[]): Promise<unknown> {
    try {
      const reply = await this.connection.run(script, [...keys, this.key("moved")], args);
      this.#checked ??= Promise.resolve();
      return reply;
    } catch (error) {
      if (error instanceof ScriptRefusal) throw this.moved(error.what);
      throw error;
    }
  }
}
