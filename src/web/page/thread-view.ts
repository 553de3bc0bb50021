/** A thread (`#/thread/ID`): every message with its body and each copy's state; reply, acknowledge, archive. */
import type { MessageView } from "../../room/model.ts";
import { button, copiesLine, marks } from "./cells.ts";
import { writeForm } from "./compose-view.ts";
import type { PageActions, PageState } from "./context.ts";
import { clock } from "./format.ts";
import { h, link, type VNode } from "./vnode.ts";

/** One message; with `own` actions on the person's own copy (acknowledge while unacknowledged, archive while live). */
export function messageCard(message: MessageView, state: PageState, actions: PageActions | null): VNode {
  const head = h(
    "div",
    { class: "head" },
    link(message.from, "agent", message.from),
    " → ",
    copiesLine(message),
    h("span", { class: "time" }, clock(message.created_at)),
    h("span", { class: "id" }, message.id),
    marks(message),
  );
  const card = h(
    "article",
    { class: "message", "data-id": message.id },
    head,
    message.subject !== null && h("div", { class: "subject" }, message.subject),
    h("pre", { class: "body" }, message.body),
  );
  if (actions && !state.readOnly && state.human !== null) {
    const own = message.copies.find((copy) => copy.mailbox === state.human && !copy.archived);
    const buttons: VNode[] = [];
    if (own && (own.delivery.state === "stored" || own.delivery.state === "notified" || own.delivery.state === "read"))
      buttons.push(button("Acknowledge", "ack", () => actions.act("/api/ack", { id: message.id })));
    if (own) buttons.push(button("Archive", "archive", () => actions.act("/api/archive", { id: message.id })));
    if (buttons.length > 0) card.children.push(h("div", { class: "actions" }, ...buttons));
  }
  return card;
}

export function threadView(messages: readonly MessageView[], state: PageState, actions: PageActions): VNode {
  const first = messages[0]!;
  const last = messages[messages.length - 1]!;
  // The reply answers the last message, from the person's copy when they have one.
  const target = last.copies.find((copy) => copy.mailbox === state.human) ?? last.copies[0]!;
  return h(
    "div",
    { class: "thread", id: "thread" },
    h("h2", {}, "Thread: ", first.subject ?? first.id),
    ...messages.map((message) => messageCard(message, state, actions)),
    writeForm(state, actions, { id: last.id, mailbox: target.mailbox, from: last.from }),
  );
}
