/** The small pieces several views show: a copy's state, a message's marks, its recipients with their states. */
import type { Delivery, MessageView } from "../../room/model.ts";
import { clock, stateOf } from "./format.ts";
import { h, link, type MaybeChild, on, type VNode } from "./vnode.ts";

/** A button that does one thing, named for tests and scripts by `data-action`. */
export function button(text: string, name: string, onClick: () => void): VNode {
  return on(h("button", { type: "button", "data-action": name }, text), { click: onClick });
}

export function stateCell(copy: { archived: boolean; delivery: Delivery }): VNode {
  const word = stateOf(copy);
  const when = copy.delivery.state === "stored" ? "" : copy.delivery.at ? ` ${clock(copy.delivery.at)}` : "";
  return h("span", { class: `state state-${word}`, "data-state": word }, word + (copy.archived ? "" : when));
}

/** Urgent or high priority, needs a response, and the type when not a plain message. */
export function marks(row: { priority: string; needs_response: boolean; type: string }): VNode {
  const urgent = row.priority === "urgent" || row.priority === "high";
  return h(
    "span",
    { class: "marks" },
    urgent && h("span", { class: `priority priority-${row.priority}` }, row.priority),
    row.needs_response && h("span", { class: "needs" }, "needs response"),
    row.type !== "message" && h("span", { class: "type" }, row.type),
  );
}

export function copiesLine(message: MessageView): VNode {
  const parts: MaybeChild[] = [];
  message.copies.forEach((copy, i) => {
    if (i > 0) parts.push(", ");
    parts.push(link(copy.mailbox, "agent", copy.mailbox), " ", stateCell(copy));
  });
  return h("span", { class: "copies" }, ...parts);
}

/** A labelled form field. */
export const field = (label: string, input: VNode): VNode => h("label", {}, h("span", {}, label), input);

export function select(name: string, options: readonly (readonly [string, string])[], chosen: string): VNode {
  return h(
    "select",
    { name },
    ...options.map(([value, label]) => h("option", value === chosen ? { value, selected: "" } : { value }, label)),
  );
}
