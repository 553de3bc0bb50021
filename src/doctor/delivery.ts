/**
 * How each agent's mail reaches it: the agent CLI in its window's pane and that CLI's own channel (mailman/adapters.ts),
 * or why there is none and what brings the mail instead; mail an agent CLI holds for its user's approval.
 */
import { displayName } from "../mail/names.ts";
import { targetPanes } from "../mailman/rules.ts";
import { paneAgent, foregroundRefusal } from "../mailman/typing-gate.ts";
import { ADAPTERS, geminiTyping } from "../mailman/adapters.ts";
import { HOLD_ADVICE } from "../mailman/native.ts";
import { keptBounces } from "../dead-letters/return-path.ts";
import { KEPT_BECAUSE } from "../mail/bounce.ts";
import type { Store } from "../store/store.ts";
import { foregroundOf } from "../tmux/windows.ts";
import { projectPanes } from "../mailman/panes.ts";
import type { ProjectBoundary } from "../identity/projects.ts";
import { note, ok, problem, type Finding } from "./finding.ts";

type Env = Record<string, string | undefined>;

const quoted = (name: string) => `"${displayName(name)}"`;

/** Messages of the mailbox its agent CLI holds for its user's approval (their last event is `held`). */
async function heldCount(store: Store, mailbox: string): Promise<number> {
  const announced = await store.announced(mailbox);
  if (announced.size === 0) return 0;
  let held = 0;
  for (const events of (await store.deliveries(mailbox, announced)).values()) if (events.at(-1)?.event === "held") held++;
  return held;
}

/**
 * Bounces kept in this store for senders of other projects whose store could not take them (dead-letters/return-path.ts):
 * each sender's count, and why the newest waits. They go on by themselves; `cleanup` sends them on at once.
 */
async function keptBounceFindings(store: Store): Promise<Finding[]> {
  let kept: Awaited<ReturnType<typeof keptBounces>>;
  try {
    kept = await keptBounces(store);
  } catch {
    // The store check says what cannot be read.
    return [];
  }
  return kept.map(({ mailbox, bounces }) => {
    const why = bounces.at(-1)![KEPT_BECAUSE];
    const one = bounces.length === 1;
    const reason = typeof why === "string" ? why : "kept by an earlier agentmail";
    return problem(
      "delivery",
      `${bounces.length} bounce${one ? "" : "s"} for ${quoted(mailbox)} kept in this store: the store ${one ? "it goes" : "they go"} back to ` +
        `did not take ${one ? "it" : "them"} (${displayName(reason)}); ${one ? "it goes" : "they go"} on by ${one ? "itself" : "themselves"} ` +
        "at the mailman's next sweep once that store does",
      "bring that repository back or make its mailbox writable, then: agentmail cleanup",
    );
  });
}

/** `project`: whose panes are this store's agents' (mailman/panes.ts), as the mailman sees them. */
export async function deliveryFindings(store: Store | null, env: Env, project: ProjectBoundary | null): Promise<Finding[]> {
  if (store === null) return [];
  const findings: Finding[] = await keptBounceFindings(store);
  const panes = await projectPanes(env, project);
  if (panes === null) return findings;
  const statuses = await store.statuses();
  const names = [...new Set([...statuses.map((status) => status.name), ...(await store.mailboxes())])].sort();
  for (const name of names) {
    const named = panes.filter((pane) => pane.windowName === name);
    if (named.length === 0) continue;
    const registered = statuses.find((status) => status.name === name)?.pane ?? null;
    const seen = named.map((pane) => {
      const foreground = foregroundOf(pane);
      return { ...pane, foreground, agent: paneAgent(foreground) };
    });
    const target = targetPanes({ name, unread: 0, status: null, statusPane: registered }, seen)[0];
    const who = `${quoted(name)} (pane ${target?.paneId ?? named[0]!.paneId})`;
    if (!target) {
      const why = seen.map((pane) => `pane ${pane.paneId} ${foregroundRefusal(pane.foreground)}`).join("; ");
      findings.push(note("delivery", `${quoted(name)}: no agent CLI in its window (${why}); its mail waits for agentmail receive`));
      continue;
    }
    const found = await ADAPTERS[target.agent!].find(target.foreground!.leader.pid!, target.paneId, env);
    if (found.route?.channel === "claude-inbox") {
      findings.push(ok("delivery", `${who}: Claude Code's inbox (${found.route.socket}): mail arrives idle and busy, nothing typed`));
    } else if (found.route?.channel === "codex-control") {
      const thread = `thread ${found.route.threadId}`;
      findings.push(ok("delivery", `${who}: Codex CLI's control socket, ${thread}: mail steers a running turn, or starts one`));
    } else if (target.agent === "gemini") {
      // Why an idle Gemini CLI cannot be woken is said once, in the hooks' lines (doctor/hooks.ts).
      findings.push(
        note(
          "delivery",
          `${who}: Gemini CLI: its hooks bring the mail, mid-turn and at the end of a turn; not while idle`,
          geminiTyping(name),
        ),
      );
    } else if (found.route === null && /cannot be told/.test(found.none.reason)) {
      const fix = "run each Codex CLI in its own directory (a worktree each), or give each its own CODEX_HOME";
      findings.push(problem("delivery", `${who}: ${found.none.reason}; its hooks cannot tell whose thread they run for either`, fix));
    } else if (found.route === null) findings.push(note("delivery", `${who}: ${found.none.reason}`));
    const held = await heldCount(store, name);
    if (held > 0) findings.push(problem("delivery", `${quoted(name)}: ${held} message${held === 1 ? "" : "s"} held: ${HOLD_ADVICE}`, null));
  }
  return findings;
}
