/**
 * The mailman's choice of channel: an agent's fresh mail goes through its agent CLI's own channel in its pane
 * (adapters.ts: Claude Code's inbox, Codex's control socket), found for the process that holds the pane and reused
 * while it does, framed within the budget and the agent's pace (native.ts, mail/frame.ts). An agent with no window
 * here, no agent CLI in it, or a CLI with no channel gets no frame: why is recorded on its messages (unreachable,
 * once per reason) and its hooks bring the mail, or, for an agent that opted in, a typed reminder (reminders.ts).
 */
import type { Message } from "../mail/message.ts";
import type { Found as RouteFound } from "../mail/route.ts";
import { FRAME_PACE_MS } from "../mail/frame.ts";
import type { DeliveryEvent } from "../mail/arrival.ts";
import { lastFramed } from "../store/local/routes-file.ts";
import type { AgentCli } from "../tmux/foreground.ts";
import type { Pane } from "../tmux/windows.ts";
import { ADAPTERS } from "./adapters.ts";
import { sessionAlive } from "./claude-inbox.ts";
import { panesOf, projectPanes, routeInPanes } from "./panes.ts";
import { targetPanes, type MailboxView } from "./rules.ts";
import { note, quoted, typingFor, type Run } from "./run-state.ts";
import { foregroundRefusal } from "./typing-gate.ts";

/** Records why these messages cannot be put in front of their agent now (once per message and reason). */
async function unreachable(run: Run, messages: readonly Message[], reason: string): Promise<void> {
  const at = new Date().toISOString();
  const byMailbox = new Map<string, DeliveryEvent[]>();
  for (const message of messages) {
    const key = `${message.to}\n${message.id}`;
    if (run.unreachableNoted.get(key) === reason) continue;
    run.unreachableNoted.set(key, reason);
    byMailbox.set(message.to, [...(byMailbox.get(message.to) ?? []), { id: message.id, event: "unreachable", at, reason }]);
  }
  for (const [mailbox, events] of byMailbox) await run.options.store.recordDelivery(mailbox, events);
}

/** The route into an agent's CLI in its pane: the one found before while the same process holds the pane, else found afresh. */
async function findRoute(run: Run, name: string, cli: AgentCli, pid: number, paneId: string): Promise<RouteFound> {
  const known = run.routes.get(name);
  if (known && known.cli === cli && known.pid === pid && known.paneId === paneId && sessionAlive(known.route.pid, known.route.procStart))
    return { route: known.route };
  const found = await ADAPTERS[cli].find(pid, paneId, run.options.env);
  if (found.route) run.routes.set(name, { cli, pid, paneId, route: found.route });
  else run.routes.delete(name);
  return found;
}

/**
 * Frames an agent's fresh mail through its agent CLI's own channel in its pane. Returns whether the agent has such
 * a channel (then it is never typed into); otherwise records why not, and its hooks bring the mail.
 */
export async function frameMail(run: Run, view: MailboxView, messages: Message[], panes: Pane[]): Promise<boolean> {
  const { root, log } = run.options;
  const name = quoted(view.name);
  const typing = typingFor(run, view.name);
  const seen = panesOf(panes, view.name);
  if (seen.length === 0) {
    await unreachable(run, messages, "no tmux window of this project has its name");
    run.native.forget(view.name);
    if (!typing) note(run, view.name, "no_window", "no window with that name", `dropped ${name}: no window with that name`);
    return false;
  }
  const target = targetPanes(view, seen)[0];
  if (!target) {
    const detail = seen.map((pane) => `pane ${pane.paneId} ${foregroundRefusal(pane.foreground)}`).join("; ");
    await unreachable(run, messages, `no agent CLI runs in its window (${detail}); nothing is typed there`);
    run.native.forget(view.name);
    if (!typing) note(run, view.name, "no_agent_pane", detail, `not framing mail for ${name}: ${detail}; no agent CLI there; will retry`);
    return false;
  }
  let found = await findRoute(run, view.name, target.agent as AgentCli, target.foreground!.leader.pid!, target.paneId);
  const refusal = found.route ? run.native.refusal(found.route) : null;
  if (refusal !== null) found = { route: null, none: { reason: refusal, hooks: true } };
  if (found.route === null) {
    await unreachable(run, messages, found.none.reason);
    run.native.forget(view.name);
    if (!typing) note(run, view.name, "hooks", found.none.reason, `no channel into ${name}: ${found.none.reason}`, null);
    return false;
  }
  const due = lastFramed(root, view.name) + FRAME_PACE_MS;
  if (due > Date.now()) {
    run.paceDue = run.paceDue === null ? due : Math.min(run.paceDue, due);
    return true;
  }
  const delivered = await run.native.deliver(view.name, found.route, messages);
  // A frame that could only list mail waits for the burst to end (mail/arrival-window.ts).
  if (delivered.due !== undefined) {
    run.paceDue = run.paceDue === null ? delivered.due : Math.min(run.paceDue, delivered.due);
    return true;
  }
  if (delivered.channel === null) {
    run.routes.delete(view.name);
    note(run, view.name, "waiting", delivered.detail, `could not frame mail for ${name}: ${delivered.detail}; will retry`);
    return true;
  }
  const count = `${delivered.carried.length} message${delivered.carried.length === 1 ? "" : "s"}`;
  const detail = `${count} via ${delivered.channel} in ${found.route.pane} (${delivered.detail})`;
  run.state.frames = (run.state.frames ?? 0) + 1;
  const line = `framed ${count} for ${name} via ${delivered.channel} in ${found.route.pane}`;
  // A receipt may have come before the send returned: then the state says held, and stays so.
  if (delivered.held) log(line);
  else note(run, view.name, "notified", detail, line, delivered.channel);
  return true;
}

/**
 * The routes an earlier mailman kept for `send` are kept only while they lead into this project's agent of that name
 * (an earlier version chose panes of any project, and pane ids repeat across tmux servers); the rest are forgotten
 * before `send` can use them again. Without tmux to ask, nothing can be checked and every route is forgotten.
 */
export async function keepRoutesInProject(run: Run): Promise<void> {
  const panes = await projectPanes(run.options.env, run.options.project);
  run.native.keepRoutes((agent, route) => panes !== null && routeInPanes(agent, route, panes));
}
