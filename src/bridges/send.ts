/**
 * Sending to a bridge address: the message is written into the peer's directory in the peer's format, durably (temp
 * file, fsync, linked into place, directory fsynced) and never over another file, before its id is returned.
 * `send`, `reply` and the MCP server's send reach this through one lazy import, so a plain send never loads it.
 */
import { rmSync } from "node:fs";
import { basename, join } from "node:path";
import { whoIsCalling } from "../identity/caller.ts";
import type { Invocation } from "../identity/invocation.ts";
import { AgentmailError } from "../mail/errors.ts";
import { newId } from "../mail/ids.ts";
import { mailFields, type MailFieldInput } from "../mail/fields.ts";
import { validateBody, type Message } from "../mail/message.ts";
import { ensureRoot, localRoot } from "../store/paths.ts";
import type { Store } from "../store/store.ts";
import { parseBridgeAddress, type BridgeAddress } from "./address.ts";
import { sendToTeam, splitTeamTarget } from "./claude-team/send.ts";
import { type BridgeConfig, findBridge, readBridges } from "./config.ts";
import { recordSent } from "./ledger.ts";
import { dmailFileName, formatDmail, recordToDmail } from "./formats/dmail.ts";
import { feat124FileName, formatFeat124, recordToFeat124 } from "./formats/feat124.ts";
import { buildRecord, checkOutboundFields, DMAIL_KINDS, type BridgeRecord, type MailFields } from "./fields.ts";
import { findMessage } from "./deliver.ts";
import { formatRoo, recordToRoo } from "./formats/roo.ts";
import { checkPeerName, writeFileIfAbsent, writeNewFile } from "./files.ts";
import { deliverOrQueue, withRooQueue } from "./queue.ts";

export interface BridgeSend {
  /** The local mail directory, where the bridges' configuration and logs are. */
  root: string;
  /** Where the mail is: a reply's original is looked up there. */
  store: Store;
  /** The sending agent's name. */
  from: string;
  address: string;
  body: string;
  fields?: MailFields;
  /** The message being answered, when this is a reply: a FEAT-124 reply names its source file in in_reply_to. */
  original?: Message;
  now?: Date;
  /** Hears what the sender should know that does not stop the send (a Claude team's lead that does not poll). */
  warn?: (warning: string) => void;
}

export interface Sent {
  record: BridgeRecord;
  /** Where the message went, as the user sees it (for a queued Roo message: where it will go). */
  file: string;
  /** A Roo message waiting in the store for the recipient to delete the previous one. */
  queued: boolean;
}

/** The FEAT-124 file an imported message came from, for a reply's in_reply_to. */
function sourceFileOf(message: Message | null | undefined): string | undefined {
  const via = message?.via as { bridge?: unknown; file?: unknown } | undefined;
  return via?.bridge === "feat124" && typeof via.file === "string" ? basename(via.file) : undefined;
}

async function toFeat124(request: BridgeSend, bridge: BridgeConfig, name: string, record: BridgeRecord): Promise<Sent> {
  checkPeerName(name, "FEAT-124 mailbox name");
  const repliedTo = record.in_reply_to;
  const answered =
    repliedTo === undefined
      ? null
      : request.original?.id === repliedTo
        ? request.original
        : await findMessage(request.store, request.from, repliedTo);
  const fileOfId = (id: string) => (id === repliedTo ? sourceFileOf(answered) : undefined);
  const message = recordToFeat124(record, name, fileOfId);
  const file = writeNewFile(join(bridge.dir, name), (n) => feat124FileName(message, n), formatFeat124(message));
  recordSent(request.root, { id: record.id, bridge: bridge.name, file, at: record.created_at });
  return { record, file: join(bridge.label, name, file), queued: false };
}

async function toRoo(request: BridgeSend, bridge: BridgeConfig, slug: string, record: BridgeRecord): Promise<Sent> {
  checkPeerName(slug, "Roo slug");
  const content = formatRoo(recordToRoo(record));
  const queued = await withRooQueue(request.root, () => deliverOrQueue(request.root, bridge.dir, slug, record.id, content));
  return { record, file: join(bridge.label, `to-${slug}.md`), queued };
}

/** Archive first, then inbox, as the protocol's own senders do; a name taken in either gets the next free one. */
function toDmail(request: BridgeSend, bridge: BridgeConfig, record: BridgeRecord): Sent {
  const base = recordToDmail(record);
  for (let n = 1; n <= 9999; n++) {
    const name = n === 1 ? base.frontmatter.name : `${base.frontmatter.name}-${n}`;
    const content = formatDmail({ ...base, frontmatter: { ...base.frontmatter, name } });
    const fileName = dmailFileName(name);
    if (!writeFileIfAbsent(join(bridge.dir, "archive"), fileName, content)) continue;
    let delivered: boolean;
    try {
      delivered = writeFileIfAbsent(join(bridge.dir, "inbox"), fileName, content);
    } catch (error) {
      // Not sent (no id is printed), so the archive must not say it was.
      rmSync(join(bridge.dir, "archive", fileName), { force: true });
      throw error;
    }
    if (!delivered) {
      rmSync(join(bridge.dir, "archive", fileName), { force: true });
      continue;
    }
    recordSent(request.root, { id: record.id, bridge: bridge.name, file: fileName, at: record.created_at });
    return { record, file: join(bridge.label, "inbox", fileName), queued: false };
  }
  throw new AgentmailError("conflict", `every name for the D-Mail is taken in ${bridge.label}; move old files out of its archive/`);
}

/** Writes one message to a bridge address for an agent whose name is known (no tmux needed). */
export async function exportMessage(request: BridgeSend): Promise<Sent> {
  const address: BridgeAddress | null = parseBridgeAddress(request.address);
  if (!address) {
    const forms = "feat124:NAME, roo:SLUG, dmail:ENDPOINT or claude-team:TEAM/MEMBER";
    throw new AgentmailError("unknown_recipient", `'${request.address}' is not a bridge address (${forms})`);
  }
  const fields = checkOutboundFields(address.kind, request.fields ?? {});
  const team = address.kind === "claude-team" ? splitTeamTarget(address.target) : null;
  const name = address.kind === "dmail" ? address.target : team ? team.team : address.kind;
  const bridge = findBridge(readBridges(request.root), address.kind, name);
  const now = request.now ?? new Date();
  const base = { id: newId(), from: request.from, to: request.address, message: request.body, created_at: now.toISOString() };
  const record = buildRecord(base, fields);
  if (team) {
    const note = request.warn ?? (() => {});
    const sent = await sendToTeam({ ...request, bridge, member: team.member, record, now, note });
    return { ...sent, queued: false };
  }
  if (address.kind === "feat124") return toFeat124(request, bridge, address.target, record);
  if (address.kind === "roo") return toRoo(request, bridge, address.target, record);
  return toDmail(request, bridge, record);
}

/**
 * What `send` calls for `feat124:`, `roo:`, `dmail:` and `claude-team:` recipients: the caller's identity from tmux as for any send,
 * then the message written (or, for a Roo recipient whose file is still there, queued) durably. The returned
 * message's id may be printed.
 */
export async function sendViaBridge(
  invocation: Invocation,
  address: string,
  body: string,
  fields: MailFields = {},
  original?: Message,
  warn?: (warning: string) => void,
): Promise<Message> {
  validateBody(body);
  const { store, caller } = await whoIsCalling(invocation, "mail");
  const root = ensureRoot(localRoot(invocation.cwd, invocation.env));
  const sent = await exportMessage({ root, store, from: caller.name, address, body, fields, original, warn });
  return sent.record;
}

/**
 * `send`'s route to a bridge: the sender's fields checked as for any send, except that a `dmail:` address also takes
 * the D-Mail kinds as types.
 */
export function sendFieldsViaBridge(
  invocation: Invocation,
  address: string,
  body: string,
  input: MailFieldInput,
  warn?: (warning: string) => void,
): Promise<Message> {
  const extraTypes = address.startsWith("dmail:") ? DMAIL_KINDS : [];
  return sendViaBridge(invocation, address, body, mailFields(input, extraTypes), undefined, warn);
}
