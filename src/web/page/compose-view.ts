/** Writing as the person: compose (`#/compose[/TO]`) and the reply form under a thread. */
import { field, select } from "./cells.ts";
import type { PageActions, PageState } from "./context.ts";
import { h, on, type VNode } from "./vnode.ts";

/** The message a reply answers: its id, the mailbox holding the copy the person saw, and its sender. */
export interface ReplyTarget {
  id: string;
  mailbox: string;
  from: string;
}

const TYPES = ["message", "status", "alert", "task", "question", "response", "report", "handoff"] as const;
const PRIORITIES = ["normal", "urgent", "high", "low"] as const;
const same = (value: string) => [value, value] as const;

/** Each form drawn gets a number: a view drawn again while a send is on its way carries it, so that form is reset too. */
let drafts = 0;

/** Compose (no `replyTo`) or reply; refused up front, saying why, when the page may not write. */
export function writeForm(state: PageState, actions: PageActions, replyTo: ReplyTarget | null, to = ""): VNode {
  if (state.readOnly) return h("p", { class: "note", id: "write-note" }, "This page is read-only (agentmail web --read-only): no sending.");
  if (state.human === null) {
    return h(
      "p",
      { class: "note", id: "write-note" },
      "To write, set your name once: export AGENTMAIL_HUMAN=<name> (or agentmail web --as <name>), then start agentmail web again.",
    );
  }
  const fields = replyTo
    ? [h("h3", {}, "Reply as ", state.human, " to ", replyTo.from === state.human ? replyTo.mailbox : replyTo.from)]
    : [
        h("h3", {}, "Write as ", state.human),
        field(
          "To",
          h(
            "span",
            { class: "to" },
            on(h("input", { name: "to", required: "", value: to, placeholder: "bob, bob@project, a,b, @all, @GROUP, role:ROLE" }), {
              keydown(element, event) {
                if ((event as KeyboardEvent).key !== "Enter") return;
                event.preventDefault();
                void checkTo(element as HTMLInputElement, actions);
              },
            }),
            h("span", { class: "to-check", id: "to-check", role: "status" }),
          ),
        ),
        field("Subject", h("input", { name: "subject", placeholder: "optional" })),
        field("Type", select("type", TYPES.map(same), "message")),
        field("Priority", select("priority", PRIORITIES.map(same), "normal")),
      ];
  const form = h(
    "form",
    { class: "write", id: replyTo ? "reply-form" : "compose-form", "data-draft": String(++drafts) },
    ...fields,
    field("Message", h("textarea", { name: "body", rows: 6, required: "" })),
    h("button", { type: "submit" }, replyTo ? "Send reply" : "Send"),
  );
  return on(form, {
    submit(element, event) {
      event.preventDefault();
      void submitWrite(element as HTMLFormElement, actions, replyTo);
    },
  });
}

/**
 * Checks the To as its send will resolve it (Enter in the field): whom it reaches, or why it cannot, beside the
 * field; then on to the subject. Nothing is sent.
 */
export async function checkTo(input: HTMLInputElement, actions: PageActions): Promise<void> {
  // The view may be drawn again while the check is on its way (the room changed): the answer goes to the form shown then.
  const current = (): HTMLInputElement =>
    input.isConnected ? input : (input.ownerDocument.querySelector<HTMLInputElement>('#compose-form [name="to"]') ?? input);
  const say = (text: string, kind: string) => {
    const shown = current().parentElement?.querySelector(".to-check");
    if (!shown) return;
    shown.textContent = text;
    shown.className = `to-check ${kind}`;
  };
  say("checking…", "info");
  try {
    const checked = await actions.post<{ to: string[]; warnings: string[] }>("/api/check", { to: input.value });
    say(`reaches ${checked.to.join(", ")}${checked.warnings.length > 0 ? ` (${checked.warnings.join("; ")})` : ""}`, "ok");
    (current().form?.querySelector('[name="subject"]') as HTMLInputElement | null)?.focus();
  } catch (error) {
    say((error as Error).message, "error");
    current().focus();
  }
}

/** Sends what the form holds; on success it is emptied (and so is the same draft if the view was drawn again meanwhile). */
export async function submitWrite(form: HTMLFormElement, actions: PageActions, replyTo: ReplyTarget | null): Promise<void> {
  const text = (name: string) => (form.querySelector(`[name="${name}"]`) as HTMLInputElement | null)?.value ?? "";
  // A "sent <id>" left by an earlier send would read as this one's while it is on its way.
  actions.setStatus("sending…");
  try {
    const sent = replyTo
      ? await actions.post<{ id: string }>("/api/reply", { id: replyTo.id, mailbox: replyTo.mailbox, body: text("body") })
      : await actions.post<{ id: string }>("/api/send", {
          to: text("to"),
          subject: text("subject") || undefined,
          type: text("type"),
          priority: text("priority"),
          body: text("body"),
        });
    actions.setStatus(`sent ${sent.id}`, "ok");
    form.reset();
    // A refresh while it was on its way carried the text into the form now shown: that one is sent too.
    (form.ownerDocument.querySelector(`#main form.write[data-draft="${form.dataset.draft}"]`) as HTMLFormElement | null)?.reset();
    if (!replyTo) actions.go(`#/thread/${encodeURIComponent(sent.id)}`, true);
  } catch (error) {
    actions.setStatus(`not sent: ${(error as Error).message}`, "error");
  }
}

export function composeView(state: PageState, actions: PageActions, to: string): VNode {
  return h("div", {}, h("h2", {}, "Compose"), writeForm(state, actions, null, to));
}
