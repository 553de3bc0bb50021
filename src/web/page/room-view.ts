/** The room (`#/`): the agents, and the mail as it moves. */
import type { AgentRow, MailRow } from "../../room/model.ts";
import { marks, stateCell } from "./cells.ts";
import type { PageState } from "./context.ts";
import { ago, clock, stateOf } from "./format.ts";
import { h, link, type VNode } from "./vnode.ts";

export function agentsTable(agents: readonly AgentRow[]): VNode {
  const hosts = agents.some((agent) => agent.host !== null);
  const titles = ["Agent", "Status", "CLI", "Unread", "Last seen", ...(hosts ? ["Host"] : []), "Reach"];
  const rows = agents.map((agent) =>
    h(
      "tr",
      { "data-agent": agent.name, class: agent.human ? "human" : "" },
      h("td", {}, link(agent.name, "agent", agent.name), agent.human && h("span", { class: "you" }, " (you)")),
      h("td", {}, h("span", { class: `status-word status-${agent.status ?? "none"}` }, agent.status ?? "-")),
      h("td", {}, agent.cli ?? "-"),
      h("td", { class: agent.unread > 0 ? "unread num" : "num" }, String(agent.unread)),
      h("td", { class: "seen" }, ago(agent.last_seen)),
      hosts && h("td", {}, agent.host ?? "-"),
      h("td", {}, agent.reach),
    ),
  );
  return h(
    "table",
    { class: "agents", id: "agents" },
    h("thead", {}, h("tr", {}, ...titles.map((title) => h("th", {}, title)))),
    h("tbody", {}, ...rows),
  );
}

export function feedRow(row: MailRow): VNode {
  return h(
    "tr",
    { "data-id": row.id, "data-mailbox": row.mailbox, class: `mail ${stateOf(row)}` },
    h("td", { class: "time" }, clock(row.created_at)),
    h("td", {}, link(row.from, "agent", row.from), " → ", link(row.mailbox, "agent", row.mailbox)),
    h("td", {}, marks(row)),
    h("td", { class: "preview" }, link(row.preview || "(empty)", "thread", row.id)),
    h("td", {}, stateCell(row)),
  );
}

export function feedTable(rows: readonly MailRow[], id = "feed"): VNode {
  const head = h("tr", {}, ...["Time", "From → to", "", "Subject or message", "State"].map((title) => h("th", {}, title)));
  return h("table", { class: "feed", id }, h("thead", {}, head), h("tbody", {}, ...rows.map(feedRow)));
}

export function roomView(state: PageState): VNode {
  return h(
    "div",
    { class: "room" },
    h("section", {}, h("h2", {}, "Agents"), agentsTable(state.agents)),
    h("section", {}, h("h2", {}, "Mail, as it moves"), feedTable(state.feed)),
  );
}
