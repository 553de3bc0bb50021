/**
 * Where mail goes back to its sender (a bounce): the sender's mailbox in the store the message is in.
 */
import type { Message } from "../mail/message.ts";
import type { Store } from "../store/store.ts";

export interface ReturnAddress {
  store: Store;
  /** The sender's mailbox in that store. */
  mailbox: string;
  /** The sender as the report names it. */
  shown: string;
  /** Releases a store opened for this (nothing for the message's own store). */
  close(): void;
}

export async function returnAddressOf(store: Store, message: Message): Promise<ReturnAddress> {
  const from = String(message.from);
  return { store, mailbox: from, shown: from, close: () => {} };
}
