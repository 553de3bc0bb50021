/**
 * What the `bridge` commands do: configure bridges to fugue FEAT-124 `.mail/`, the Roo mailbox, D-Mail endpoints and
 * Claude Code agent teams (kept in the store; team-bridge.ts sets up the teams), run one sync pass, or keep syncing in
 * the foreground. The bridge code is imported lazily.
 */
import { existsSync, realpathSync, statSync } from "node:fs";
import { isAbsolute, join, relative, resolve } from "node:path";
import { AgentmailError } from "../mail/errors.ts";
import { displayName } from "../mail/names.ts";
import { ensureRoot, findRepository, localRoot } from "../store/paths.ts";
import type { BridgeKind } from "../bridges/address.ts";
import type { BridgeConfig } from "../bridges/config.ts";
import type { BridgeLoopTotals } from "../bridges/loop.ts";
import type { SyncProgress, SyncReport } from "../bridges/sync.ts";
import { storeAt } from "../identity/caller.ts";
import type { Invocation } from "../identity/invocation.ts";

export interface AddRequest {
  kind: string;
  /** The D-Mail endpoint's name. */
  name?: string;
  dir?: string;
  /** `KIND=RECIPIENT`, for D-Mail. */
  routes?: string[];
  to?: string;
  /** claude-team: the tmux window the lead runs in. */
  lead?: string;
  /** claude-team: `NAME=AGENT`, a member's inbox for an agentmail recipient. */
  members?: string[];
  /** Hears what the user should know that does not stop the add. */
  warn?: (warning: string) => void;
}

const DEFAULT_DIRS: Record<string, string> = { feat124: ".mail", roo: ".roo/mailbox" };
const ENDPOINT_NAME = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$/;

const storeOf = (invocation: Invocation) => ensureRoot(localRoot(invocation.cwd, invocation.env));

/** The directory, absolute (symlinks in it resolved once, now), and how to show it: relative to the top when inside. */
function bridgeDir(invocation: Invocation, kind: string, given: string | undefined): { dir: string; label: string } {
  const top = findRepository(invocation.cwd, invocation.env)?.workTree ?? invocation.cwd;
  let dir = given === undefined ? join(top, DEFAULT_DIRS[kind]!) : resolve(invocation.cwd, given);
  if (existsSync(dir)) {
    if (!statSync(dir).isDirectory()) throw new AgentmailError("usage", `${dir} is not a directory; give --dir a directory`);
    dir = realpathSync(dir);
  }
  const inside = relative(realpathOr(top), dir);
  const label = inside !== "" && !inside.startsWith("..") && !isAbsolute(inside) ? inside : dir;
  return { dir, label };
}

function realpathOr(path: string): string {
  try {
    return realpathSync(path);
  } catch {
    return path;
  }
}

async function dmailKinds(): Promise<readonly string[]> {
  return (await import("../bridges/fields.ts")).DMAIL_KINDS;
}

async function routesOf(specs: string[]): Promise<Record<string, string>> {
  const kinds = await dmailKinds();
  const routes: Record<string, string> = {};
  for (const spec of specs) {
    const equals = spec.indexOf("=");
    const kind = spec.slice(0, equals);
    const recipient = spec.slice(equals + 1);
    if (equals <= 0 || recipient === "") {
      throw new AgentmailError("usage", `--route takes KIND=RECIPIENT (e.g. report=reviewer), not '${displayName(spec)}'`);
    }
    if (!kinds.includes(kind)) {
      throw new AgentmailError("usage", `unknown D-Mail kind '${displayName(kind)}' in --route; use one of ${kinds.join(", ")}`);
    }
    routes[kind] = recipient;
  }
  return routes;
}

export async function addBridge(invocation: Invocation, request: AddRequest): Promise<BridgeConfig> {
  const { BRIDGE_KINDS } = await import("../bridges/address.ts");
  if (!(BRIDGE_KINDS as readonly string[]).includes(request.kind)) {
    throw new AgentmailError("usage", `unknown bridge kind '${displayName(request.kind)}'; use feat124, roo, dmail or claude-team`);
  }
  const kind = request.kind as BridgeKind;
  if (kind === "claude-team") {
    if (request.routes?.length || request.to !== undefined) throw new AgentmailError("usage", "--route and --to are for dmail endpoints");
    const { addTeamBridge } = await import("./team-bridge.ts");
    const added = await addTeamBridge(invocation, { team: request.name, dir: request.dir, lead: request.lead, members: request.members });
    for (const warning of added.warnings) request.warn?.(warning);
    return added.bridge;
  }
  if (request.lead !== undefined || request.members?.length) {
    throw new AgentmailError("usage", "--lead and --member are for claude-team bridges");
  }
  let bridge: BridgeConfig;
  if (kind === "dmail") {
    const name = request.name;
    if (name === undefined) {
      throw new AgentmailError("usage", "missing endpoint name; usage: agentmail bridge add dmail NAME --dir DIR --to RECIPIENT");
    }
    if (name === "feat124" || name === "roo") {
      throw new AgentmailError("invalid_name", `'${name}' names the ${name} bridge; give the endpoint its tool's name`);
    }
    if (!ENDPOINT_NAME.test(name)) {
      const rule = "use letters, digits, '.', '_' and '-' (e.g. paintress)";
      throw new AgentmailError("invalid_name", `invalid endpoint name '${displayName(name)}'; ${rule}`);
    }
    if (request.dir === undefined) {
      throw new AgentmailError("usage", "missing --dir; give the tool's D-Mail directory (the one holding inbox/, outbox/, archive/)");
    }
    const { dir, label } = bridgeDir(invocation, kind, request.dir);
    if (!existsSync(dir)) {
      throw new AgentmailError("not_found", `no directory ${dir}; create it, or point --dir at the tool's D-Mail directory`);
    }
    const routes = await routesOf(request.routes ?? []);
    if (Object.keys(routes).length === 0 && request.to === undefined) {
      throw new AgentmailError("usage", "say where the endpoint's D-Mails go: --to RECIPIENT, or --route KIND=RECIPIENT for each kind");
    }
    const { deliverable, recipientProblem } = await import("../bridges/deliver.ts");
    const known = await deliverable(await storeAt(invocation));
    const settings = [...Object.entries(routes).map(([kind, to]) => [`--route ${kind}=${to}`, to]), [`--to ${request.to}`, request.to]];
    for (const [setting, recipient] of settings) {
      const problem = recipient === undefined ? null : recipientProblem(recipient, known);
      if (problem) throw new AgentmailError(problem.code, `${displayName(setting!)}: ${problem.reason}; ${problem.fix}`);
    }
    bridge = { name, kind, dir, label, routes, ...(request.to === undefined ? {} : { to: request.to }) };
  } else {
    if (request.name !== undefined) {
      const usage = `agentmail bridge add ${kind} [--dir DIR]`;
      throw new AgentmailError("usage", `a ${kind} bridge takes no name (it is named ${kind}); usage: ${usage}`);
    }
    if (request.routes?.length || request.to !== undefined) throw new AgentmailError("usage", "--route and --to are for dmail endpoints");
    bridge = { name: kind, kind, ...bridgeDir(invocation, kind, request.dir) };
  }
  const { updateBridges } = await import("../bridges/config.ts");
  await updateBridges(storeOf(invocation), (bridges) => {
    const same = bridges.find((existing) => existing.name === bridge.name && existing.kind === bridge.kind);
    if (same && JSON.stringify(same) !== JSON.stringify(bridge)) {
      const remove = `agentmail bridge remove ${bridge.name}`;
      throw new AgentmailError("conflict", `a ${kind} bridge named ${bridge.name} exists with other settings; remove it first: ${remove}`);
    }
    return same ? bridges : [...bridges, bridge];
  });
  return bridge;
}

export interface ListedBridge extends BridgeConfig {
  /** Roo: messages waiting for their recipient to delete the previous one. */
  queued?: number;
}

export async function listBridges(invocation: Invocation): Promise<ListedBridge[]> {
  const root = localRoot(invocation.cwd, invocation.env);
  const { readBridges } = await import("../bridges/config.ts");
  const { queuedCounts } = await import("../bridges/queue.ts");
  const counts = queuedCounts(root);
  const total = Object.values(counts).reduce((sum, count) => sum + count, 0);
  return readBridges(root).map((bridge) => (bridge.kind === "roo" ? { ...bridge, queued: total } : bridge));
}

export async function removeBridge(invocation: Invocation, name: string): Promise<BridgeConfig> {
  const { updateBridges } = await import("../bridges/config.ts");
  let removed: BridgeConfig | undefined;
  await updateBridges(storeOf(invocation), (bridges) => {
    removed = bridges.find((bridge) => bridge.name === name);
    if (!removed) {
      const names = bridges.map((bridge) => bridge.name);
      const known = names.length ? ` (the bridges are ${names.join(", ")})` : "";
      throw new AgentmailError("not_found", `no bridge named '${displayName(name)}'${known}; run 'agentmail bridge list'`);
    }
    return bridges.filter((bridge) => bridge !== removed);
  });
  return removed!;
}

/** A pass's report as `bridge sync` prints it: a line per file imported, exported or left, and each bridge's summary. */
export async function syncReportLines(report: SyncReport): Promise<string[]> {
  const { exportedLine, importedLine, leftLine, summaryLine } = await import("../bridges/sync.ts");
  const lines: string[] = [];
  for (const bridge of report.bridges) {
    for (const entry of bridge.imported) lines.push(importedLine(bridge.name, entry));
    for (const entry of bridge.exported) lines.push(exportedLine(bridge.name, entry));
    for (const entry of bridge.left) lines.push(leftLine(entry));
    lines.push(summaryLine(bridge));
  }
  if (report.bridges.length === 0) lines.push("No bridges; add one with 'agentmail bridge add feat124|roo|dmail|claude-team'");
  if (report.deferred > 0) lines.push(`${report.deferred} still being written; a later sync imports them`);
  return lines;
}

/** One pass both ways; waits for another pass's batch rather than skipping (the user asked for a pass now). */
export async function syncOnce(invocation: Invocation, progress?: SyncProgress): Promise<SyncReport> {
  const { syncBridges } = await import("../bridges/sync.ts");
  return syncBridges(storeOf(invocation), await storeAt(invocation), { lockTimeoutMs: 60_000, progress });
}

/** Syncs until a signal (SIGTERM, SIGINT, SIGHUP) stops it. */
export async function runBridges(invocation: Invocation, sweepSeconds: number, log: (line: string) => void): Promise<BridgeLoopTotals> {
  const root = storeOf(invocation);
  const { runBridgeLoop } = await import("../bridges/loop.ts");
  const stop = new AbortController();
  const onSignal = () => stop.abort();
  const signals = ["SIGTERM", "SIGINT", "SIGHUP"] as const;
  for (const signal of signals) process.on(signal, onSignal);
  try {
    return await runBridgeLoop({ root, store: await storeAt(invocation), sweepMs: sweepSeconds * 1000, log, signal: stop.signal });
  } finally {
    for (const signal of signals) process.off(signal, onSignal);
  }
}
