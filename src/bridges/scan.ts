/**
 * Finding and reading what peers left for agentmail's agents: FEAT-124 files in `.mail/<agent>/`, Roo
 * `to-<agent>.md` files, D-Mails in an endpoint's `outbox/`. Each becomes a record (formats/) or a reason to leave
 * it alone; nothing here moves or writes anything.
 */
import { readdirSync, type Dirent } from "node:fs";
import { join } from "node:path";
import { displayName } from "../mail/names.ts";
import { MAX_MESSAGE_BYTES } from "../mail/message.ts";
import type { BridgeConfig } from "./config.ts";
import { dmailToRecord, parseDmail } from "./formats/dmail.ts";
import { feat124ToRecord, parseFeat124 } from "./formats/feat124.ts";
import { Malformed, malformed, MAX_FRONTMATTER_BYTES } from "./formats/frontmatter.ts";
import type { BridgeRecord, Inbound } from "./fields.ts";
import { parseRoo, rooSlugOf, rooToRecord } from "./formats/roo.ts";
import { type PeerFile, peerNameProblem, removeStaleTemps } from "./files.ts";
import type { RecipientProblem } from "./deliver.ts";

/** The most frontmatter a file may have on top of the largest body a message may have. */
export const MAX_FILE_BYTES = MAX_MESSAGE_BYTES + MAX_FRONTMATTER_BYTES;

export interface Candidate {
  bridge: BridgeConfig;
  /** Absolute. */
  path: string;
  /** As the user sees it: `.mail/alice/2024-…md`. */
  file: string;
  /** The agent a FEAT-124 directory or a Roo file is for; D-Mails are routed by kind once read. */
  recipient?: string;
}

export interface Left {
  bridge: string;
  file: string;
  reason: string;
}

export interface Scan {
  candidates: Candidate[];
  left: Left[];
  /** Files addressed to names that are not agentmail agents: the peer's own mail. */
  others: number;
}

/** A directory's entries by name; temp files that killed agentmail writers left in it are removed on the way. */
function list(dir: string): Dirent[] {
  let entries: Dirent[];
  try {
    entries = readdirSync(dir, { withFileTypes: true }).sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  } catch {
    return [];
  }
  removeStaleTemps(
    dir,
    entries.filter((entry) => entry.name.startsWith(".agentmail-")).map((entry) => entry.name),
  );
  return entries;
}

const isMessageFile = (entry: Dirent) => entry.name.endsWith(".md") && !entry.name.startsWith(".");

function scanFeat124(bridge: BridgeConfig, agents: Set<string>, roles: Set<string>, scan: Scan): void {
  for (const mailbox of list(bridge.dir)) {
    if (mailbox.name.startsWith(".")) continue;
    const label = join(bridge.label, mailbox.name);
    if (mailbox.isSymbolicLink()) {
      const reason = "it is a symlink; agentmail does not follow links in a bridged directory";
      scan.left.push({ bridge: bridge.name, file: `${label}/`, reason });
      continue;
    }
    if (!mailbox.isDirectory()) continue;
    const files = list(join(bridge.dir, mailbox.name)).filter(isMessageFile);
    if (files.length === 0) continue;
    // An agent's name wins; else a role's (FEAT-124's tag mailboxes): one member of the role takes each message.
    const recipient = agents.has(mailbox.name) ? mailbox.name : roles.has(mailbox.name) ? `role:${mailbox.name}` : null;
    if (recipient === null) {
      scan.others += files.length;
      continue;
    }
    for (const file of files) {
      const path = join(bridge.dir, mailbox.name, file.name);
      scan.candidates.push({ bridge, path, file: join(label, file.name), recipient });
    }
  }
}

function scanRoo(bridge: BridgeConfig, agents: Set<string>, scan: Scan): void {
  for (const entry of list(bridge.dir)) {
    const slug = rooSlugOf(entry.name);
    if (slug === null || entry.name.startsWith(".")) continue;
    const file = join(bridge.label, entry.name);
    const problem = peerNameProblem(slug);
    if (problem) {
      scan.left.push({ bridge: bridge.name, file, reason: `the slug '${displayName(slug)}' is not a name: ${problem}` });
      continue;
    }
    if (!agents.has(slug)) {
      scan.others++;
      continue;
    }
    scan.candidates.push({ bridge, path: join(bridge.dir, entry.name), file, recipient: slug });
  }
}

function scanDmail(bridge: BridgeConfig, scan: Scan): void {
  for (const entry of list(join(bridge.dir, "outbox")).filter(isMessageFile)) {
    scan.candidates.push({ bridge, path: join(bridge.dir, "outbox", entry.name), file: join(bridge.label, "outbox", entry.name) });
  }
}

/** The files waiting in one bridge's directories, oldest name first within each directory. */
export function scanBridge(bridge: BridgeConfig, agents: Set<string>, roles: Set<string> = new Set()): Scan {
  const scan: Scan = { candidates: [], left: [], others: 0 };
  if (bridge.kind === "feat124") scanFeat124(bridge, agents, roles, scan);
  else if (bridge.kind === "roo") scanRoo(bridge, agents, scan);
  else scanDmail(bridge, scan);
  return scan;
}

export interface ImportContext {
  /** FEAT-124: file names agentmail wrote → the ids of their messages. */
  idOfFile: (fileName: string) => string | undefined;
  /** D-Mail: why a configured recipient cannot take an import now (recipients.ts), or null. */
  recipientProblem: (recipient: string) => RecipientProblem | null;
}

/**
 * The D-Mail recipient for a kind: its route, else the endpoint's default; a recipient an import cannot reach now
 * leaves the D-Mail where it is, with what to do.
 */
function routeOf(bridge: BridgeConfig, kind: string, context: ImportContext): string {
  const routed = bridge.routes?.[kind];
  const recipient = routed ?? bridge.to;
  if (recipient === undefined) {
    const add = `agentmail bridge add dmail ${bridge.name} … --route ${kind}=AGENT`;
    malformed(`no route for D-Mail kind '${kind}'; add one with '${add}' or give --to`);
  }
  const problem = context.recipientProblem(recipient);
  if (problem) {
    const setting = routed === undefined ? `--to ${recipient}` : `--route ${kind}=${recipient}`;
    const change = `change the endpoint: agentmail bridge remove ${bridge.name}, then bridge add dmail ${bridge.name} …`;
    malformed(`not delivered, left in the outbox: ${setting}: ${problem.reason}; ${problem.fix}, or ${change}`);
  }
  return recipient;
}

/**
 * Why files could not be read as their format, by kind and SHA-256: `bridge run` and the mailman meet a file they
 * leave alone on every pass, and parsing up to 64 KiB of hostile YAML again each time would cost each pass up to
 * half a second per file. Only the format is remembered: whether a recipient can take the file is asked anew.
 */
const unreadable = new Map<string, string>();
const MAX_UNREADABLE = 1000;

function parsed<T>(kind: string, file: PeerFile, parse: (text: string) => T): T {
  const key = `${kind}:${file.sha256}`;
  const known = unreadable.get(key);
  if (known !== undefined) malformed(known);
  try {
    return parse(file.text);
  } catch (error) {
    if (error instanceof Malformed) {
      if (unreadable.size >= MAX_UNREADABLE) unreadable.delete(unreadable.keys().next().value!);
      unreadable.set(key, error.message);
    }
    throw error;
  }
}

/**
 * The record a peer's file becomes, with the given id, or a Malformed saying why it cannot become one.
 * `recipient` overrides the routing (an import finished after a crash goes where it was first sent).
 */
export function recordOf(candidate: Candidate, file: PeerFile, id: string, context: ImportContext, recipient?: string): BridgeRecord {
  const { bridge } = candidate;
  const via = { bridge: bridge.kind, ...(bridge.kind === "dmail" ? { endpoint: bridge.name } : {}), file: candidate.file };
  let record: BridgeRecord;
  if (bridge.kind === "feat124") {
    const message = parsed(bridge.kind, file, parseFeat124);
    const inbound: Inbound = { id, to: recipient ?? candidate.recipient!, via, idOfFile: context.idOfFile };
    record = feat124ToRecord(message, inbound);
  } else if (bridge.kind === "roo") {
    record = rooToRecord(parsed(bridge.kind, file, parseRoo), { id, to: recipient ?? candidate.recipient!, via });
  } else {
    const message = parsed(bridge.kind, file, parseDmail);
    const to = recipient ?? routeOf(bridge, message.frontmatter.kind, context);
    record = dmailToRecord(message, { id, to, via, fileTime: file.mtime.toISOString() });
  }
  const size = new TextEncoder().encode(record.message).length;
  if (size > MAX_MESSAGE_BYTES) malformed(`its body is ${size} bytes, over the ${MAX_MESSAGE_BYTES}-byte limit for a message`);
  return record;
}
