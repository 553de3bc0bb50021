import { isDecimal } from "../mail/ids.ts";
import { AgentmailError, notInTmux } from "../mail/errors.ts";
import { displayName } from "../mail/names.ts";
import { tmux } from "./client.ts";
import { settlePanePaths, type PanePath } from "./pane-path.ts";

export interface Window {
  id: string;
  name: string;
  active: boolean;
  /**
   * tmux chose the name (the window option automatic-rename is on): it follows the program running in the window,
   * so it is no stable address. `agentmail name`, `tmux new-window -n` and `rename-window` turn it off.
   */
  auto: boolean;
  /** The window's active pane, the one reminders are typed into. */
  paneId: string;
  sessionId: string;
  /** tmux itself escapes tabs and newlines in session names, so this field cannot forge a record. */
  sessionName: string;
  /**
   * Where the window's active pane works (`#{pane_current_path}`: the cwd of its foreground process), which tells
   * the project it belongs to (identity/projects.ts); "" when tmux does not know.
   */
  path: string;
}

export interface Caller {
  paneId: string;
  sessionId: string;
  windowId: string;
  /** The caller's identity: the name of the window that holds the caller's own pane. */
  name: string;
  /** Every window of the caller's session, in index order. */
  windows: Window[];
  /** Every window of the tmux server: a name must belong to one of them only (see sameNamedWindows). */
  serverWindows: Window[];
}

type Env = Record<string, string | undefined>;

const isPaneId = (text: string): boolean => text[0] === "%" && isDecimal(text.slice(1));

/** A per-call random marker starts each record, so a window name holding tabs or newlines cannot forge one. */
export function newMarker(): string {
  const bytes = new Uint8Array(9);
  crypto.getRandomValues(bytes);
  let marker = "AM";
  for (let i = 0; i < bytes.length; i++) marker += bytes[i]!.toString(36).padStart(2, "0");
  return marker;
}

export function splitRecords(stdout: string, marker: string): string[] | null {
  if (!stdout.startsWith(marker)) return null;
  const records = stdout.slice(marker.length).split("\n" + marker);
  const last = records[records.length - 1]!;
  if (last.endsWith("\n")) records[records.length - 1] = last.slice(0, -1);
  return records;
}

function fields(record: string, count: number): string[] | null {
  const parts: string[] = [];
  let rest = record;
  for (let i = 1; i < count; i++) {
    const tab = rest.indexOf("\t");
    if (tab === -1) return null;
    parts.push(rest.slice(0, tab));
    rest = rest.slice(tab + 1);
  }
  parts.push(rest);
  return parts;
}

/** Tags the kinds of record, so that no window record can pass for the caller's (say, after a dead pane's). */
const SELF = "self\t";
const WINDOW = "window\t";
/** A window's pane's path, a record of its own: both it and the window's name are free text, each last in its record. */
const PATH = "path\t";
/** The window name last: it may hold tabs. tmux escapes tabs and newlines in session names itself. */
const WINDOW_FIELDS =
  "#{session_id}\t#{session_name}\t#{window_id}\t#{window_active}\t#{?automatic-rename,1,0}\t#{pane_id}\t#{window_name}";

/** The tmux arguments that list every window of a server, then each window's path, as parseWindows reads them. */
export const listWindowsArgs = (marker: string): string[] => [
  "list-windows",
  "-a",
  "-F",
  `${marker}${WINDOW}${WINDOW_FIELDS}`,
  ";",
  "list-windows",
  "-a",
  "-F",
  `${marker}${PATH}#{window_id}\t#{pane_pid}\t#{pid}\t#{pane_current_path}`,
];

/** Windows as listed, and what settles their paths (tmux/pane-path.ts): each active pane's first process, the server's pid. */
interface ListedWindows {
  windows: Window[];
  paths: Map<string, PanePath>;
  serverPid: number;
}

/** The windows listWindowsArgs's records name, their paths as tmux gave them; null when a record is not one of them. */
function parseWindowRecords(records: readonly string[]): ListedWindows | null {
  const windows: Window[] = [];
  const paths = new Map<string, PanePath>();
  let serverPid = 0;
  for (const record of records) {
    if (record.startsWith(PATH)) {
      const path = fields(record.slice(PATH.length), 4);
      if (path) paths.set(path[0]!, { panePid: Number(path[1]), path: path[3]! });
      if (path) serverPid = Number(path[2]);
      continue;
    }
    const window = record.startsWith(WINDOW) ? fields(record.slice(WINDOW.length), 7) : null;
    if (!window) return null;
    const [sessionId, sessionName, id, active, auto, windowPane, name] = window as [string, string, string, string, string, string, string];
    windows.push({ id, active: active === "1", auto: auto === "1", paneId: windowPane, name, sessionId, sessionName, path: "" });
  }
  for (const window of windows) window.path = paths.get(window.id)?.path ?? "";
  return { windows, paths, serverPid };
}

/** The windows listWindowsArgs's records name, each path settled (tmux/pane-path.ts); null when a record is not one of them. */
export async function parseWindows(records: readonly string[]): Promise<Window[] | null> {
  const listed = parseWindowRecords(records);
  if (!listed) return null;
  await settlePanePaths([...listed.paths.values()], listed.serverPid);
  for (const window of listed.windows) window.path = listed.paths.get(window.id)?.path ?? "";
  return listed.windows;
}

export function parseCaller(stdout: string, marker: string, paneId: string): Caller | null {
  return parseLookup(stdout, marker, paneId)?.caller ?? null;
}

/** The caller, and what settles its windows' paths. */
function parseLookup(
  stdout: string,
  marker: string,
  paneId: string,
): { caller: Caller; paths: Map<string, PanePath>; serverPid: number } | null {
  const records = splitRecords(stdout, marker);
  const first = records?.[0];
  const self = first?.startsWith(SELF) ? fields(first.slice(SELF.length), 3) : null;
  // A dead pane: display-message still succeeds, with every field empty.
  if (!records || !self || self[0] === "" || self[1] === "") return null;
  const listed = parseWindowRecords(records.slice(1));
  if (!listed) return null;
  const { windows: serverWindows, paths, serverPid } = listed;
  const sessionId = self[0]!;
  const windows: Window[] = [];
  for (const window of serverWindows) if (window.sessionId === sessionId) windows.push(window);
  return { caller: { paneId, sessionId, windowId: self[1]!, name: self[2]!, windows, serverWindows }, paths, serverPid };
}

/** The windows of the whole tmux server that carry `name`, oldest first (tmux numbers window ids in creation order). */
export function sameNamedWindows(caller: Caller, name: string): Window[] {
  const number = (window: Window) => Number(window.id.slice(1));
  return caller.serverWindows.filter((window) => window.name === name).sort((a, b) => number(a) - number(b));
}

/**
 * Who is calling and who can be written to, in one tmux client call: the name of the window holding the caller's
 * own pane ($TMUX_PANE, so the answer does not depend on which window the human is looking at) and every window of
 * the server (`list-windows -a`), from which the caller's session's windows are picked; listing the whole server
 * costs 0.1–0.2 ms more than one session (bench/tmux-list-cost.ts). A lookup started early by `startCallerLookup` for this same environment is reused.
 */
export function resolveCaller(env: Env = process.env): Promise<Caller> {
  const early = earlyLookup;
  earlyLookup = null;
  if (early && early.env === env) return early.caller;
  return sharedLookup(env);
}

/** Lookups of one pane of one tmux server: the one in flight, and the next, which calls made since then wait for. */
interface Rounds {
  current: Promise<Caller> | null;
  next: { caller: Promise<Caller>; start(): void } | null;
}

const rounds = new Map<string, Rounds>();

/**
 * A long-lived process (the MCP server) resolves the caller once per call, and calls come many at a time. Calls
 * share a lookup, but only one that started after they did: a call made while a lookup is in flight waits for the
 * next, which starts when that one ends. So no call is answered from before it began (a window renamed just before
 * a call is seen by it, as by a command of its own), and calls in flight cost one tmux client between them.
 */
function sharedLookup(env: Env): Promise<Caller> {
  const key = `${env.TMUX}\n${env.TMUX_PANE}\n${env.PATH}`;
  let state = rounds.get(key);
  if (!state) rounds.set(key, (state = { current: null, next: null }));
  const shared = state;
  const begin = (): Promise<Caller> => {
    const caller = lookUpCaller(env);
    shared.current = caller;
    const over = () => {
      shared.current = null;
      const next = shared.next;
      shared.next = null;
      if (next) next.start();
      else if (rounds.get(key) === shared) rounds.delete(key);
    };
    caller.then(over, over);
    return caller;
  };
  if (!shared.current) return begin();
  if (!shared.next) {
    let start!: () => void;
    const caller = new Promise<Caller>((resolve, reject) => (start = () => begin().then(resolve, reject)));
    shared.next = { caller, start };
  }
  return shared.next.caller;
}

async function lookUpCaller(env: Env): Promise<Caller> {
  if (!env.TMUX) throw notInTmux("not inside tmux ($TMUX is not set)", "runInTmux");
  const paneId = env.TMUX_PANE ?? "";
  if (!isPaneId(paneId)) throw notInTmux(`$TMUX_PANE is ${paneId ? `malformed ("${displayName(paneId)}")` : "not set"}`, "runInTmux");
  const marker = newMarker();
  const result = await tmux(
    ["display-message", "-p", "-t", paneId, `${marker}${SELF}#{session_id}\t#{window_id}\t#{window_name}`, ";", ...listWindowsArgs(marker)],
    env,
  );
  if (result.code !== 0) {
    const reason = result.stderr.trim().split("\n")[0] || `exit ${result.code}`;
    throw notInTmux(`tmux cannot find your pane ${paneId} (${reason})`, "runInLivePane");
  }
  const lookup = parseLookup(result.stdout, marker, paneId);
  if (!lookup) throw notInTmux(`tmux gave no identity for pane ${paneId}`, "runInLivePane");
  const { caller, paths, serverPid } = lookup;
  // A window opening right now may not say yet where it works: settled before anyone sorts windows by project.
  await settlePanePaths([...paths.values()], serverPid);
  for (const window of caller.serverWindows) window.path = paths.get(window.id)?.path ?? "";
  if (caller.name === "") throw new AgentmailError("invalid_name", "your tmux window has no name; name it with: tmux rename-window <name>");
  if (!caller.windows.some((window) => window.id === caller.windowId && window.name === caller.name)) {
    throw new AgentmailError(
      "not_found",
      `your window "${displayName(caller.name)}" is not in the window list of session ${caller.sessionId}; retry, or rename the window`,
    );
  }
  return caller;
}

let earlyLookup: { env: Env; caller: Promise<Caller> } | null = null;

/**
 * Starts the identity lookup before anything else is loaded: the tmux round trip (~3 ms) then overlaps loading the
 * command and opening the store instead of adding to them. Its failure surfaces when resolveCaller is awaited.
 */
export function startCallerLookup(env: Env = process.env): void {
  const caller = lookUpCaller(env);
  caller.catch(() => {});
  earlyLookup = { env, caller };
}
