/** A namespace whose mail moves elsewhere (migrate): the moved key, and how to remove what is left. */
import { shellQuote } from "../../mail/next-steps.ts";
import { parseMovedNote, serializeMovedNote, type MovedNote } from "../moved.ts";
import type { Keyspace } from "./keyspace.ts";
import { LIVE_LEASES } from "./scripts.ts";
import { redisCliCommand } from "./url.ts";

/** How long marking the mail as moving waits for receives that hold a lease to end (see markMoved). */
const LEASES_DRAIN_MS = 5_000;

export async function moved(space: Keyspace): Promise<MovedNote | null> {
  const note = (await space.connection.command("GET", [space.key("moved")])) as string | null;
  return note === null ? null : parseMovedNote(note);
}

/**
 * Sets (or deletes) the moved key. The scripts that send and take refuse once it is set, atomically; when the mail
 * starts moving, this then waits (at most 5 s) for the leases of receives under way to end, so a message being
 * shown is copied read. A lease left after that is a receiver that died or hangs: its message is copied unread
 * and shown once more, as after any receiver's death.
 */
export async function markMoved(space: Keyspace, note: MovedNote | null): Promise<void> {
  const key = space.key("moved");
  if (note) await space.connection.command("SET", [key, serializeMovedNote(note).trimEnd()]);
  else await space.connection.command("DEL", [key]);
  if (note?.state !== "moving") return;
  const deadline = Date.now() + LEASES_DRAIN_MS;
  for (;;) {
    const mailboxes = (await space.connection.command("HKEYS", [space.key("unread")])) as string[];
    const leases = mailboxes.flatMap((mailbox) => {
      try {
        return [space.keys(mailbox).lease];
      } catch {
        return [];
      }
    });
    if (leases.length === 0 || Number(await space.connection.run(LIVE_LEASES, leases, [])) === 0) return;
    if (Date.now() > deadline) return;
    await new Promise((done) => setTimeout(done, 20));
  }
}

/** Deletes every key of the namespace but the moved key (which keeps agents left on it from using it). */
export async function mailRemoval(space: Keyspace): Promise<string | null> {
  const pattern = space.prefix.replace(/[*?[\]\\]/g, (char) => `\\${char}`) + "*";
  const cli = redisCliCommand(await space.connection.server());
  const keep = space.key("moved");
  const password = space.address.password ? "  # with REDISCLI_AUTH set to the server's password" : "";
  return `${cli} --scan --pattern ${shellQuote(pattern)} | grep -v -x -F ${shellQuote(keep)} | xargs ${cli} del${password}`;
}
