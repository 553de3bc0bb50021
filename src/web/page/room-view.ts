/** The room (`#/`): what needs the person, the agents (their problems, claims, last activity), the mailman, the mail. */
import type { AgentRow, MailmanView, MailRow, NeedRow } from "../../room/model.ts";
import { marks, stateCell } from "./cells.ts";
import type { PageActions, PageState } from "./context.ts";
import { ago, clock, stateOf } from "./format.ts";
import { h, link, on, type VNode } from "./vnode.ts";

const PROBLEM_WORD: Record<string, string> = { gone: "gone", unreachable: "unreachable", stalled: "stalled" };

export function agentsTable(agents: readonly AgentRow[]): VNode {
  const hosts = agents.some((agent) => agent.host !== null);
  const projects = agents.some((agent) => agent.project !== null);
  const titles = [
    "Agent",
    ...(projects ? ["Project"] : []),
    "Status",
    "CLI",
    "Unread",
    "Last seen",
    ...(hosts ? ["Host"] : []),
    "Reach",
    "Problem",
  ];
  const rows = agents.map((agent) =>
    h(
      "tr",
      {
        "data-agent": agent.name,
        "data-problem": agent.problem?.kind ?? "",
        class: [agent.human ? "human" : "", agent.problem ? "has-problem" : ""].filter(Boolean).join(" "),
      },
      h(
        "td",
        { class: "name" },
        link(agent.name, "agent", agent.name),
        agent.human && h("span", { class: "you" }, " (you)"),
        !agent.human && agent.person && h("span", { class: "person" }, " (person)"),
      ),
      projects && h("td", {}, agent.project ?? "-"),
      h("td", {}, h("span", { class: `status-word status-${agent.status ?? "none"}` }, agent.status ?? "-")),
      h("td", {}, agent.cli ?? "-"),
      h("td", { class: agent.unread > 0 ? "unread num" : "num" }, String(agent.unread)),
      h(
        "td",
        { class: "seen", title: agent.last_seen ?? "" },
        ago(agent.last_seen),
        agent.activity && h("span", { class: "activity" }, ` · ${agent.activity}`),
      ),
      hosts && h("td", {}, agent.host ?? "-"),
      h(
        "td",
        { class: "reach" },
        agent.reach,
        agent.channel && h("span", { class: "channel" }, ` (${agent.channel})`),
        agent.claims > 0 && h("span", { class: "claims" }, ` · ${agent.claims} claim${agent.claims === 1 ? "" : "s"}`),
      ),
      h(
        "td",
        { class: "problem-cell" },
        agent.problem &&
          h("span", { class: `problem-word problem-${agent.problem.kind}` }, PROBLEM_WORD[agent.problem.kind] ?? agent.problem.kind),
        agent.problem && h("span", { class: "reason" }, ` ${agent.problem.reason}`),
      ),
    ),
  );
  return h(
    "table",
    { class: "agents", id: "agents" },
    h("thead", {}, h("tr", {}, ...titles.map((title) => h("th", {}, title)))),
    h("tbody", {}, ...rows),
  );
}

/** The agents, all or only those with a problem, with the switch between the two and the mailman under them. */
export function agentsSection(state: PageState, actions: PageActions): VNode {
  const problems = state.agents.filter((agent) => agent.problem !== null).length;
  const shown = state.problemsOnly ? state.agents.filter((agent) => agent.problem !== null) : state.agents;
  const toggle = on(
    h(
      "button",
      { type: "button", class: "filter", id: "problems-only", "aria-pressed": state.problemsOnly ? "true" : "false" },
      state.problemsOnly ? "show all" : `only problems (${problems})`,
    ),
    {
      click() {
        state.problemsOnly = !state.problemsOnly;
        actions.redraw();
      },
    },
  );
  return h(
    "section",
    { id: "agents-section" },
    h("h2", {}, `Agents (${state.agents.length})`, " ", toggle),
    h("div", { class: "scroll" }, agentsTable(shown)),
    mailmanLine(state.mailman),
    state.claims.length > 0 &&
      h("p", { class: "note" }, link(`${state.claims.length} claim${state.claims.length === 1 ? "" : "s"} stored`, "claims")),
  );
}

/** The mailman of this store: whether it runs, since when, its last sweep and its last failure. */
export function mailmanLine(mailman: MailmanView | null): VNode {
  const text =
    mailman === null
      ? "Mailman: not known here (no local store)."
      : !mailman.running
        ? "Mailman: not running for this store; agents read their mail on their own turn (agentmail mailman start)."
        : `Mailman: running (pid ${mailman.pid}) since ${clock(mailman.since)}; last sweep ${ago(mailman.last_sweep_at)}` +
          (mailman.last_failure === null ? "." : `; last failure ${ago(mailman.last_failure_at)}: ${mailman.last_failure}`);
  return h("p", { class: mailman?.last_failure ? "mailman failing" : "mailman", id: "mailman" }, text);
}

const NEED_WORD: Record<NeedRow["kind"], string> = {
  "to-you": "to you",
  question: "unanswered",
  bounced: "bounced",
  undeliverable: "stuck",
  claim: "claim waited for",
};

/** What needs the person, each row one click from its thread (and the reply under it), or from the claims. */
export function needsTable(needs: readonly NeedRow[]): VNode {
  if (needs.length === 0) return h("p", { class: "note", id: "needs" }, "Nothing needs you now.");
  const rows = needs.map((need) =>
    h(
      "tr",
      { "data-kind": need.kind, "data-id": need.id ?? "", "data-mailbox": need.mailbox },
      h("td", { class: "kind" }, NEED_WORD[need.kind]),
      h("td", { class: "time" }, clock(need.at)),
      h("td", { class: "who" }, need.from, " → ", need.mailbox),
      h("td", { class: "preview" }, need.id === null ? link(need.preview, "claims") : link(need.preview || "(empty)", "thread", need.id)),
      h("td", { class: "why" }, need.why),
    ),
  );
  const head = h("tr", {}, ...["", "Time", "From → to", "Subject or message", "Why"].map((title) => h("th", {}, title)));
  return h("table", { class: "needs", id: "needs" }, h("thead", {}, head), h("tbody", {}, ...rows));
}

export function needsSection(needs: readonly NeedRow[]): VNode {
  return h(
    "section",
    { id: "needs-section", class: needs.length > 0 ? "needs-you" : "" },
    h("h2", {}, `Needs you (${needs.length})`),
    needsTable(needs),
  );
}

export function feedRow(row: MailRow): VNode {
  return h(
    "tr",
    { "data-id": row.id, "data-mailbox": row.mailbox, class: `mail ${stateOf(row)}` },
    h("td", { class: "time" }, clock(row.created_at)),
    h("td", { class: "who" }, link(row.from, "agent", row.from), " → ", link(row.mailbox, "agent", row.mailbox)),
    h("td", {}, marks(row)),
    h("td", { class: "preview" }, link(row.preview || "(empty)", "thread", row.id)),
    h("td", {}, stateCell(row)),
  );
}

export function feedTable(rows: readonly MailRow[], id = "feed"): VNode {
  const head = h("tr", {}, ...["Time", "From → to", "", "Subject or message", "State"].map((title) => h("th", {}, title)));
  return h("table", { class: "feed", id }, h("thead", {}, head), h("tbody", {}, ...rows.map(feedRow)));
}

export function roomView(state: PageState, actions: PageActions): VNode {
  return h(
    "div",
    { class: "room-page" },
    needsSection(state.needs),
    h(
      "div",
      { class: "room" },
      agentsSection(state, actions),
      h("section", { id: "mail-section" }, h("h2", {}, "Mail, as it moves"), h("div", { class: "scroll" }, feedTable(state.feed))),
    ),
  );
}
