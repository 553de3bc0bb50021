/**
 * agentmail's entries in JSON settings files: the lifecycle hooks (Claude Code's settings.json and Codex's hooks.json
 * share one shape, and Gemini CLI's is the same with other event names) and the MCP server entry. Installing puts
 * ours in place exactly once and leaves the rest alone; uninstalling removes ours and the containers it emptied.
 */
import { AgentmailError } from "../mail/errors.ts";
import { isAgentmailHookCommand } from "./hook-commands.ts";
import { isObject, type JsonDocument, sameJson, type JsonObject, type JsonPath } from "./json-document.ts";

/** One matcher group of hooks for one event, exactly as written into the file. */
export interface HookGroup {
  event: string;
  group: JsonObject;
}

export const MCP_SERVER_NAME = "agentmail";
const MCP_PATH: JsonPath = ["mcpServers", MCP_SERVER_NAME];

function isOurHook(hook: unknown, binary: string): boolean {
  return isObject(hook) && hook.type === "command" && typeof hook.command === "string" && isAgentmailHookCommand(hook.command, binary);
}

/** For each matcher group of an event: the indices of our hooks in it (empty when it has none). */
function ourHooksIn(groups: unknown[], binary: string): number[][] {
  return groups.map((group) => {
    if (!isObject(group) || !Array.isArray(group.hooks)) return [];
    return group.hooks.flatMap((hook, index) => (isOurHook(hook, binary) ? [index] : []));
  });
}

function eventGroups(document: JsonDocument, event: string, label: string): unknown[] {
  const groups = document.valueAt(["hooks", event]);
  if (groups === undefined) return [];
  if (!Array.isArray(groups))
    throw new AgentmailError(
      "conflict",
      `hooks.${event} in ${label} is not a list; fix it by hand, then run the command again; nothing was changed`,
    );
  return groups;
}

/** Removes our hooks from one event's groups (a group left with none of its own hooks goes too); true if any went. */
function removeOurHooks(document: JsonDocument, event: string, groups: unknown[], binary: string): boolean {
  const ours = ourHooksIn(groups, binary);
  let removed = false;
  for (let index = groups.length - 1; index >= 0; index--) {
    const indices = ours[index]!;
    if (indices.length === 0) continue;
    removed = true;
    const hooks = (groups[index] as JsonObject).hooks as unknown[];
    if (indices.length === hooks.length) document.remove(["hooks", event, index]);
    else for (const hook of [...indices].reverse()) document.remove(["hooks", event, index, "hooks", hook]);
  }
  return removed;
}

export function installHooks(document: JsonDocument, plan: HookGroup[], binary: string, label: string): void {
  const hooks = document.valueAt(["hooks"]);
  if (hooks !== undefined && !isObject(hooks))
    throw new AgentmailError(
      "conflict",
      `"hooks" in ${label} is not an object; fix it by hand, then run the command again; nothing was changed`,
    );
  for (const { event, group } of plan) {
    const groups = eventGroups(document, event, label);
    const holding = ourHooksIn(groups, binary).flatMap((indices, index) => (indices.length > 0 ? [index] : []));
    if (holding.length === 1 && sameJson(groups[holding[0]!], group)) continue;
    removeOurHooks(document, event, groups, binary);
    document.append(["hooks", event], group);
  }
}

/** Removes our hooks from every event, and an event list or a hooks object that only ours had filled. */
export function uninstallHooks(document: JsonDocument, binary: string, label: string): void {
  const hooks = document.valueAt(["hooks"]);
  if (!isObject(hooks)) return;
  let removedAny = false;
  for (const [event, groups] of Object.entries(hooks)) {
    if (!Array.isArray(groups) || !removeOurHooks(document, event, groups, binary)) continue;
    removedAny = true;
    if ((eventGroups(document, event, label) as unknown[]).length === 0) document.remove(["hooks", event]);
  }
  if (removedAny && Object.keys(document.valueAt(["hooks"]) as JsonObject).length === 0) document.remove(["hooks"]);
}

export function installMcpServer(document: JsonDocument, entry: JsonObject): void {
  if (!sameJson(document.valueAt(MCP_PATH), entry)) document.set(MCP_PATH, entry);
}

export function uninstallMcpServer(document: JsonDocument): void {
  if (document.valueAt(MCP_PATH) === undefined) return;
  document.remove(MCP_PATH);
  const servers = document.valueAt(["mcpServers"]);
  if (isObject(servers) && Object.keys(servers).length === 0) document.remove(["mcpServers"]);
}
