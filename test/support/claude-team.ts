/**
 * Fake Claude Code agent teams for the claude-team bridge's tests: a config dir holding `teams/<team>/config.json`
 * and `inboxes/`, and a session file, shaped as Claude Code 2.1.332 writes them (research: /work/research/teams.md).
 * `claudeAppend` and `claudeTake` do what Claude's own writer and the lead's poller do to an inbox, written here apart
 * from the product's code, so a test pits agentmail against an independent implementation of Claude's lock protocol.
 */
import { randomBytes, randomUUID } from "node:crypto";
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  realpathSync,
  renameSync,
  rmdirSync,
  rmSync,
  statSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { AgentmailError } from "../../src/mail/errors.ts";

export interface FakeMember {
  name: string;
  /** "agentmail" (joined by agentmail), "in-process" (Claude's own teammate), or another tool's. */
  backendType?: string;
}

export interface FakeTeam {
  configDir: string;
  team: string;
  dir: string;
  configFile: string;
  inbox(member: string): string;
  /** The inbox's entries (parsed), [] when it does not exist. */
  entries(member: string): any[];
  writeInbox(member: string, items: unknown): void;
  config(): any;
  writeConfig(config: unknown): void;
  /** A session file for the lead, as a running session writes it. */
  writeSession(pid: number, paneId?: string, version?: string): void;
  remove(): void;
}

export const SESSION_ID = "1a2b3c4d-17bc-406b-a2b4-acaaccb36bc5";
export const TEAM = "session-1a2b3c4d";

export function fakeTeam(options: { configDir?: string; leadPid?: number; members?: FakeMember[]; sessionId?: string } = {}): FakeTeam {
  const configDir = options.configDir ?? realpathSync(mkdtempSync(join(tmpdir(), "agentmail-claude-")));
  const sessionId = options.sessionId ?? SESSION_ID;
  const team = `session-${sessionId.slice(0, 8)}`;
  const dir = join(configDir, "teams", team);
  mkdirSync(join(dir, "inboxes"), { recursive: true });
  const member = (name: string, backendType: string, extra: object = {}) => ({
    agentId: `${name}@${team}`,
    name,
    agentType: name === "team-lead" ? "team-lead" : "general-purpose",
    joinedAt: 1795636308125,
    tmuxPaneId: backendType === "in-process" ? "in-process" : "%9",
    cwd: "/tmp/repo",
    subscriptions: [],
    backendType,
    ...extra,
  });
  const config = {
    name: team,
    createdAt: 1795636308125,
    leadAgentId: `team-lead@${team}`,
    leadSessionId: sessionId,
    leadProcess: { pid: options.leadPid ?? process.pid, pidSpace: "vm#pid:[4026531836]", claimedAt: 1795636308124, procStart: "378880" },
    members: [
      member("team-lead", "in-process", { tmuxPaneId: "leader" }),
      ...(options.members ?? []).map((m) => member(m.name, m.backendType ?? "agentmail")),
    ],
  };
  const configFile = join(dir, "config.json");
  writeFileSync(configFile, JSON.stringify(config, null, 2));
  const inbox = (name: string) => join(dir, "inboxes", `${name.replace(/[^a-zA-Z0-9_-]/g, "-")}.json`);
  return {
    configDir,
    team,
    dir,
    configFile,
    inbox,
    entries: (name) => (existsSync(inbox(name)) ? JSON.parse(readFileSync(inbox(name), "utf8")) : []),
    writeInbox: (name, items) => writeFileSync(inbox(name), typeof items === "string" ? items : JSON.stringify(items, null, 2)),
    config: () => JSON.parse(readFileSync(configFile, "utf8")),
    writeConfig: (value) => writeFileSync(configFile, typeof value === "string" ? value : JSON.stringify(value, null, 2)),
    writeSession(pid, paneId, version = "2.1.332") {
      mkdirSync(join(configDir, "sessions"), { recursive: true });
      const session = {
        pid,
        sessionId,
        cwd: "/tmp/repo",
        startedAt: 1795635217017,
        version,
        kind: "interactive",
        ...(paneId === undefined ? {} : { tmux: `agents:@1.${paneId}` }),
      };
      writeFileSync(join(configDir, "sessions", `${pid}.json`), JSON.stringify(session));
    },
    remove: () => rmSync(configDir, { recursive: true, force: true }),
  };
}

export interface ClaudeEntry {
  from: string;
  text: string;
  summary?: string;
  timestamp: string;
  msgV: number;
  msg_id: string;
  type: string;
  read: boolean;
}

/** An entry as Claude writes one (msgV 1, a msg_id, type "message", read false). */
export function claudeEntry(from: string, text: string, summary?: string): ClaudeEntry {
  return {
    from,
    text,
    ...(summary === undefined ? {} : { summary }),
    timestamp: new Date().toISOString(),
    msgV: 1,
    msg_id: randomUUID(),
    type: "message",
    read: false,
  };
}

/** Claude's retry schedule for an inbox lock: about 0.65 s, then it gives up. */
const CLAUDE_RETRIES = [5, 10, 20, 40, 80, 100, 100, 100, 100, 100];
const sleep = (ms: number) => new Promise((done) => setTimeout(done, ms));

/** Claude's lock: mkdir `<file>.lock`, stale after 10 s, retried on Claude's schedule; false when it gave up. */
async function claudeLock(file: string): Promise<boolean> {
  const dir = `${file}.lock`;
  for (let attempt = 0; ; attempt++) {
    try {
      mkdirSync(dir);
      return true;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
      try {
        if (statSync(dir).mtimeMs < Date.now() - 10_000) {
          rmdirSync(dir);
          continue;
        }
      } catch {
        continue;
      }
    }
    const delay = CLAUDE_RETRIES[attempt];
    if (delay === undefined) return false;
    await sleep(delay);
  }
}

function claudeWrite(file: string, items: unknown[]): void {
  const temp = `${file}.tmp.${randomBytes(4).toString("hex")}`;
  writeFileSync(temp, JSON.stringify(items, null, 2), { flag: "wx" });
  renameSync(temp, file);
}

function claudeRead(file: string): unknown[] {
  try {
    const value = JSON.parse(readFileSync(file, "utf8"));
    return Array.isArray(value) ? value : [];
  } catch {
    return [];
  }
}

/** Claude's writeToMailbox: create as [] (wx), lock, read, push, rename. False when the lock was not had in time. */
export async function claudeAppend(file: string, entry: ClaudeEntry): Promise<boolean> {
  try {
    writeFileSync(file, "[]", { flag: "wx" });
  } catch {
    // There already.
  }
  if (!(await claudeLock(file))) return false;
  try {
    claudeWrite(file, [...claudeRead(file), entry]);
    return true;
  } finally {
    rmdirSync(`${file}.lock`);
  }
}

/**
 * The lead's poller: reads the inbox unlocked, then settles (removes) what it read under the lock; returns what it
 * took, or null when the lock was not had in time (the entries stay, a later poll takes them).
 */
export async function claudeTake(file: string): Promise<any[] | null> {
  const seen = claudeRead(file) as any[];
  const unread = seen.filter((entry) => entry && entry.read !== true);
  if (unread.length === 0) return [];
  if (!(await claudeLock(file))) return null;
  try {
    const key = (entry: any) => `${entry.from}|${entry.timestamp}|${entry.text}`;
    const taken = new Set(unread.map(key));
    claudeWrite(
      file,
      claudeRead(file).filter((entry: any) => entry?.read !== true && !taken.has(key(entry))),
    );
    return unread;
  } finally {
    rmdirSync(`${file}.lock`);
  }
}

/** The error a bridge operation rejects with; fails when it resolves instead. */
export async function rejection(promise: Promise<unknown>): Promise<AgentmailError> {
  try {
    await promise;
  } catch (error) {
    return error as AgentmailError;
  }
  throw new Error("expected a rejection");
}
