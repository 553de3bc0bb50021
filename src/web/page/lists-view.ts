/** An agent's mailbox (`#/agent/NAME`), its sent mail (`#/sent/NAME`) and search (`#/search/TEXT`). */
import type { MailRow, MessageView } from "../../room/model.ts";
import { copiesLine, marks } from "./cells.ts";
import type { PageActions } from "./context.ts";
import { clock } from "./format.ts";
import { feedTable } from "./room-view.ts";
import { h, link, on, type VNode } from "./vnode.ts";

export function mailboxView(name: string, items: readonly MailRow[]): VNode {
  return h(
    "div",
    { class: "mailbox" },
    h("h2", {}, "Mailbox of ", name, " ", h("small", {}, link("sent mail", "sent", name), " · ", link("write to", "compose", name))),
    items.length > 0 ? feedTable(items, "mailbox") : h("p", {}, "No mail."),
  );
}

/** Messages with every copy's state, newest first. */
export function messageList(messages: readonly MessageView[], id: string): VNode {
  if (messages.length === 0) return h("p", { id }, "Nothing found.");
  const rows = messages.map((message) =>
    h(
      "tr",
      { "data-id": message.id },
      h("td", { class: "time" }, clock(message.created_at)),
      h("td", {}, link(message.from, "agent", message.from)),
      h("td", {}, copiesLine(message)),
      h("td", {}, marks(message)),
      h("td", { class: "preview" }, link(message.subject ?? message.body.slice(0, 200), "thread", message.id)),
    ),
  );
  const head = h("tr", {}, ...["Time", "From", "To (state)", "", "Subject or message"].map((title) => h("th", {}, title)));
  return h("table", { class: "feed", id }, h("thead", {}, head), h("tbody", {}, ...rows));
}

export function sentView(name: string, messages: readonly MessageView[]): VNode {
  return h("div", {}, h("h2", {}, "Sent by ", name), messageList(messages, "sent"));
}

/** The search form, and what it found (null: nothing asked yet). */
export function searchView(query: string, found: readonly MessageView[] | null, actions: PageActions): VNode {
  const form = on(
    h(
      "form",
      { class: "search", id: "search-form" },
      h("input", { name: "q", value: query, placeholder: "text in subject, body, sender or recipient" }),
      h("button", { type: "submit" }, "Search"),
    ),
    {
      submit(element, event) {
        event.preventDefault();
        const input = element.querySelector('[name="q"]') as HTMLInputElement;
        actions.go(`#/search/${encodeURIComponent(input.value)}`);
      },
    },
  );
  return h("div", {}, h("h2", {}, "Search"), form, found && messageList(found, "results"));
}
