/**
 * The page's script, served as `/app.js` (the server sends `(${roomPage})()`): the room, an agent's mailbox, a
 * thread, search, sent mail, who writes to whom, compose and reply. It builds every element with DOM calls and
 * puts every value in with textContent or setAttribute on attributes that run nothing (never innerHTML: the CSP
 * requires Trusted Types for that, with no policy, so it would throw), and it reads no value as a URL but the links
 * it builds itself. It must not use anything from outside this function: the server sends its source alone. Types
 * are the exception (they are erased before the source is sent): the rows it reads are the room's own (room/model.ts).
 *
 * The project's TypeScript has no DOM library (it would change the types of the server's code); the few browser
 * calls the page makes are typed below, for this file only.
 */

import type { AgentRow, Delivery, MailRow, MessageView } from "../room/model.ts";

interface PageNode {
  textContent: string | null;
}
interface PageElement extends PageNode {
  className: string;
  readonly dataset: Record<string, string>;
  readonly childNodes: { length: number };
  value: string;
  readonly options: PageElement[];
  setAttribute(name: string, value: string): void;
  append(...nodes: (PageNode | string)[]): void;
  prepend(...nodes: PageNode[]): void;
  replaceWith(node: PageNode): void;
  replaceChildren(...nodes: PageNode[]): void;
  remove(): void;
  querySelector(selector: string): PageElement | null;
  querySelectorAll(selector: string): Iterable<PageElement>;
  getAttribute(name: string): string | null;
  focus(): void;
  /** On text fields only (null on a select). */
  readonly selectionStart?: number | null;
  readonly selectionEnd?: number | null;
  setSelectionRange?(start: number, end: number): void;
  addEventListener(type: string, listener: (event: { preventDefault(): void }) => void): void;
  reset(): void;
}
interface Browser {
  document: {
    body: PageElement;
    readonly activeElement: PageElement | null;
    getElementById(id: string): PageElement | null;
    querySelector(selector: string): PageElement | null;
    createElement(tag: string): PageElement;
    createElementNS(namespace: string, tag: string): PageElement;
    createTextNode(text: string): PageNode;
  };
  location: { search: string; hash: string };
  addEventListener(type: string, listener: () => void): void;
  EventSource: new (
    url: string,
  ) => {
    addEventListener(type: string, listener: (event: { data: string }) => void): void;
  };
  CSS: { escape(text: string): string };
}

export function roomPage(): void {
  const { document, location, EventSource, CSS } = globalThis as unknown as Browser;
  const page = globalThis as unknown as Browser;
  interface Graph {
    since: string | null;
    nodes: string[];
    edges: { from: string; to: string; count: number }[];
  }

  const token = new URLSearchParams(location.search).get("token") ?? "";
  const state = {
    store: "",
    human: null as string | null,
    readOnly: true,
    agents: [] as AgentRow[],
    feed: [] as MailRow[],
    connected: false,
  };
  const FEED_KEPT = 500;
  const main = document.getElementById("main")!;
  const status = document.getElementById("status")!;
  const who = document.getElementById("who")!;

  type Child = PageNode | string | null | undefined | false;
  function h(tag: string, attributes: Record<string, string> = {}, ...children: Child[]): PageElement {
    const element = document.createElement(tag);
    for (const [name, value] of Object.entries(attributes)) element.setAttribute(name, value);
    for (const child of children) if (child) element.append(typeof child === "string" ? document.createTextNode(child) : child);
    return element;
  }
  /** A link to one of the page's own views: the only URLs the page makes, from parts it encodes. */
  function link(text: string, ...parts: string[]): PageElement {
    return h("a", { href: `#/${parts.map(encodeURIComponent).join("/")}` }, text);
  }
  const pad = (value: number) => String(value).padStart(2, "0");
  function clock(iso: string | null): string {
    const time = iso === null ? Number.NaN : Date.parse(iso);
    if (!Number.isFinite(time)) return "?";
    const date = new Date(time);
    const hm = `${pad(date.getHours())}:${pad(date.getMinutes())}:${pad(date.getSeconds())}`;
    return date.toDateString() === new Date().toDateString()
      ? hm
      : `${date.getFullYear()}-${pad(date.getMonth() + 1)}-${pad(date.getDate())} ${hm}`;
  }
  function ago(iso: string | null): string {
    const time = iso === null ? Number.NaN : Date.parse(iso);
    if (!Number.isFinite(time)) return "-";
    const seconds = Math.max(0, Math.round((Date.now() - time) / 1000));
    if (seconds < 60) return `${seconds}s ago`;
    if (seconds < 3600) return `${Math.floor(seconds / 60)}m ago`;
    if (seconds < 172800) return `${Math.floor(seconds / 3600)}h ago`;
    return `${Math.floor(seconds / 86400)}d ago`;
  }
  const stateOf = (copy: { archived: boolean; delivery: Delivery }) => (copy.archived ? "archived" : copy.delivery.state);
  function stateCell(copy: { archived: boolean; delivery: Delivery }): PageElement {
    const word = stateOf(copy);
    const when = copy.delivery.state === "stored" ? "" : copy.delivery.at ? ` ${clock(copy.delivery.at)}` : "";
    return h("span", { class: `state state-${word}`, "data-state": word }, word + (copy.archived ? "" : when));
  }
  function marks(row: { priority: string; needs_response: boolean; type: string }): PageElement {
    const urgent = row.priority === "urgent" || row.priority === "high";
    return h(
      "span",
      { class: "marks" },
      urgent ? h("span", { class: `priority priority-${row.priority}` }, row.priority) : null,
      row.needs_response ? h("span", { class: "needs" }, "needs response") : null,
      row.type !== "message" ? h("span", { class: "type" }, row.type) : null,
    );
  }

  async function api<T>(path: string, params: Record<string, string> = {}): Promise<T> {
    const query = new URLSearchParams({ ...params, token });
    const response = await fetch(`${path}?${query}`, { headers: { accept: "application/json" } });
    return answerOf<T>(response);
  }
  /** A response's JSON, or an error saying what the server said (a refusal of the token is plain text). */
  async function answerOf<T>(response: { ok: boolean; status: number; text(): Promise<string> }): Promise<T> {
    const text = await response.text();
    let body: { error?: { message?: string } };
    try {
      body = JSON.parse(text);
    } catch {
      throw new Error(text.trim() || `HTTP ${response.status}`);
    }
    if (!response.ok) throw new Error(body.error?.message ?? `HTTP ${response.status}`);
    return body as T;
  }
  /** A write: the token goes in a header, which a link or a form on another site cannot send. */
  async function post<T>(path: string, body: unknown): Promise<T> {
    const response = await fetch(path, {
      method: "POST",
      headers: { "content-type": "application/json", "x-agentmail-token": token },
      body: JSON.stringify(body),
    });
    return answerOf<T>(response);
  }

  function setStatus(text: string, kind: "ok" | "error" | "info" = "info"): void {
    status.textContent = text;
    status.className = `status status-${kind}`;
  }

  // Views.

  function agentsTable(): PageElement {
    const hosts = state.agents.some((agent) => agent.host !== null);
    const head = h(
      "tr",
      {},
      ...["Agent", "Status", "CLI", "Unread", "Last seen", ...(hosts ? ["Host"] : []), "Reach"].map((title) => h("th", {}, title)),
    );
    const rows = state.agents.map((agent) =>
      h(
        "tr",
        { "data-agent": agent.name, class: agent.human ? "human" : "" },
        h("td", {}, link(agent.name, "agent", agent.name), agent.human ? h("span", { class: "you" }, " (you)") : null),
        h("td", {}, h("span", { class: `status-word status-${agent.status ?? "none"}` }, agent.status ?? "-")),
        h("td", {}, agent.cli ?? "-"),
        h("td", { class: agent.unread > 0 ? "unread num" : "num" }, String(agent.unread)),
        h("td", { class: "seen" }, ago(agent.last_seen)),
        hosts ? h("td", {}, agent.host ?? "-") : null,
        h("td", {}, agent.reach),
      ),
    );
    return h("table", { class: "agents", id: "agents" }, h("thead", {}, head), h("tbody", {}, ...rows));
  }

  function feedRow(row: MailRow): PageElement {
    const open = link(row.preview || "(empty)", "thread", row.id);
    return h(
      "tr",
      { "data-id": row.id, "data-mailbox": row.mailbox, class: `mail ${stateOf(row)}` },
      h("td", { class: "time" }, clock(row.created_at)),
      h("td", {}, link(row.from, "agent", row.from), " → ", link(row.mailbox, "agent", row.mailbox)),
      h("td", {}, marks(row)),
      h("td", { class: "preview" }, open),
      h("td", {}, stateCell(row)),
    );
  }

  function feedTable(rows: MailRow[], id = "feed"): PageElement {
    const head = h("tr", {}, ...["Time", "From → to", "", "Subject or message", "State"].map((title) => h("th", {}, title)));
    return h("table", { class: "feed", id }, h("thead", {}, head), h("tbody", {}, ...rows.map(feedRow)));
  }

  function roomView(): PageElement {
    return h(
      "div",
      { class: "room" },
      h("section", {}, h("h2", {}, "Agents"), agentsTable()),
      h("section", {}, h("h2", {}, "Mail, as it moves"), feedTable(state.feed)),
    );
  }

  function copiesLine(message: MessageView): PageElement {
    const parts: Child[] = [];
    message.copies.forEach((copy, i) => {
      if (i > 0) parts.push(", ");
      parts.push(link(copy.mailbox, "agent", copy.mailbox), " ", stateCell(copy));
    });
    return h("span", { class: "copies" }, ...parts);
  }

  function messageCard(message: MessageView, actions: boolean): PageElement {
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
      message.subject !== null ? h("div", { class: "subject" }, message.subject) : null,
      h("pre", { class: "body" }, message.body),
    );
    if (actions && !state.readOnly && state.human !== null) {
      const own = message.copies.find((copy) => copy.mailbox === state.human && !copy.archived);
      const buttons = h("div", { class: "actions" });
      if (own && (own.delivery.state === "stored" || own.delivery.state === "notified" || own.delivery.state === "read"))
        buttons.append(button("Acknowledge", "ack", () => act("/api/ack", { id: message.id })));
      if (own) buttons.append(button("Archive", "archive", () => act("/api/archive", { id: message.id })));
      if (buttons.childNodes.length > 0) card.append(buttons);
    }
    return card;
  }

  function button(text: string, name: string, onClick: () => void): PageElement {
    const element = h("button", { type: "button", "data-action": name }, text);
    element.addEventListener("click", onClick);
    return element;
  }

  async function act(path: string, body: unknown): Promise<void> {
    // Until the answer comes, the status line must not show the outcome of an earlier action as this one's.
    setStatus("working…");
    try {
      await post(path, body);
      setStatus("done", "ok");
      void render();
    } catch (error) {
      setStatus((error as Error).message, "error");
    }
  }

  function field(label: string, input: PageElement): PageElement {
    return h("label", {}, h("span", {}, label), input);
  }

  function select(name: string, options: string[], chosen: string): PageElement {
    const element = h("select", { name }) as PageElement;
    for (const option of options)
      element.append(h("option", option === chosen ? { value: option, selected: "" } : { value: option }, option));
    return element;
  }

  /** Compose (no `replyTo`) or reply: refused up front when the page may not write, and why. */
  let drafts = 0;

  function writeForm(replyTo: { id: string; mailbox: string; from: string } | null, to = ""): PageElement {
    if (state.readOnly)
      return h("p", { class: "note", id: "write-note" }, "This page is read-only (agentmail web --read-only): no sending.");
    if (state.human === null) {
      return h(
        "p",
        { class: "note", id: "write-note" },
        "To write, set your name once: export AGENTMAIL_HUMAN=<name> (or agentmail web --as <name>), then start agentmail web again.",
      );
    }
    const form = h("form", { class: "write", id: replyTo ? "reply-form" : "compose-form", "data-draft": String(++drafts) });
    const body = h("textarea", { name: "body", rows: "6", required: "" }) as PageElement;
    if (replyTo) form.append(h("h3", {}, "Reply as ", state.human, " to ", replyTo.from === state.human ? replyTo.mailbox : replyTo.from));
    else {
      form.append(
        h("h3", {}, "Write as ", state.human),
        field("To", h("input", { name: "to", required: "", value: to, placeholder: "bob, a,b, @all, @GROUP, role:ROLE" })),
        field("Subject", h("input", { name: "subject", placeholder: "optional" })),
        field("Type", select("type", ["message", "status", "alert", "task", "question", "response", "report", "handoff"], "message")),
        field("Priority", select("priority", ["normal", "urgent", "high", "low"], "normal")),
      );
    }
    form.append(field("Message", body), h("button", { type: "submit" }, replyTo ? "Send reply" : "Send"));
    form.addEventListener("submit", async (event) => {
      event.preventDefault();
      const text = (name: string) => form.querySelector(`[name="${name}"]`)?.value ?? "";
      // A "sent <id>" left by an earlier send would read as this one's while it is on its way.
      setStatus("sending…");
      try {
        const sent = replyTo
          ? await post<{ id: string }>("/api/reply", { id: replyTo.id, mailbox: replyTo.mailbox, body: text("body") })
          : await post<{ id: string }>("/api/send", {
              to: text("to"),
              subject: text("subject") || undefined,
              type: text("type"),
              priority: text("priority"),
              body: text("body"),
            });
        setStatus(`sent ${sent.id}`, "ok");
        form.reset();
        // A refresh while it was on its way carried the text into the form now shown: that one is sent too.
        main.querySelector(`form.write[data-draft="${form.dataset.draft}"]`)?.reset();
        if (!replyTo) location.hash = `#/thread/${encodeURIComponent(sent.id)}`;
      } catch (error) {
        setStatus(`not sent: ${(error as Error).message}`, "error");
      }
    });
    return form;
  }

  async function threadView(id: string): Promise<PageElement> {
    const { messages } = await api<{ messages: MessageView[] }>("/api/thread", { id });
    const last = messages[messages.length - 1]!;
    const target = last.copies.find((copy) => copy.mailbox === state.human) ?? last.copies[0]!;
    return h(
      "div",
      { class: "thread", id: "thread" },
      h("h2", {}, "Thread: ", messages[0]!.subject ?? messages[0]!.id),
      ...messages.map((message) => messageCard(message, true)),
      writeForm({ id: last.id, mailbox: target.mailbox, from: last.from }),
    );
  }

  async function mailboxView(name: string): Promise<PageElement> {
    const { items } = await api<{ items: MailRow[] }>("/api/mailbox", { name });
    return h(
      "div",
      { class: "mailbox" },
      h("h2", {}, "Mailbox of ", name, " ", h("small", {}, link("sent mail", "sent", name), " · ", link("write to", "compose", name))),
      items.length > 0 ? feedTable(items, "mailbox") : h("p", {}, "No mail."),
    );
  }

  function messageList(messages: MessageView[], id: string): PageElement {
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

  async function sentView(name: string): Promise<PageElement> {
    const { messages } = await api<{ messages: MessageView[] }>("/api/sent", { name });
    return h("div", {}, h("h2", {}, "Sent by ", name), messageList(messages, "sent"));
  }

  async function searchView(query: string): Promise<PageElement> {
    const input = h("input", { name: "q", value: query, placeholder: "text in subject, body, sender or recipient" }) as PageElement;
    const form = h("form", { class: "search", id: "search-form" }, input, h("button", { type: "submit" }, "Search"));
    form.addEventListener("submit", (event) => {
      event.preventDefault();
      location.hash = `#/search/${encodeURIComponent(input.value)}`;
    });
    const found = query === "" ? null : (await api<{ messages: MessageView[] }>("/api/search", { q: query })).messages;
    return h("div", {}, h("h2", {}, "Search"), form, found ? messageList(found, "results") : null);
  }

  const PERIODS: [string, string][] = [
    ["1h", "last hour"],
    ["24h", "last 24 hours"],
    ["7d", "last 7 days"],
    ["30d", "last 30 days"],
    ["all", "all time"],
  ];

  async function graphView(period: string): Promise<PageElement> {
    const graph = await api<Graph>("/api/graph", { period });
    const chooser = select(
      "period",
      PERIODS.map(([value]) => value),
      period,
    );
    PERIODS.forEach(([, label], i) => {
      chooser.options[i]!.textContent = label;
    });
    chooser.addEventListener("change", () => {
      location.hash = `#/graph/${encodeURIComponent(chooser.value)}`;
    });
    return h(
      "div",
      { class: "graph" },
      h("h2", {}, "Who writes to whom ", chooser),
      graph.edges.length === 0 ? h("p", {}, "No mail in this period.") : drawGraph(graph),
    );
  }

  /**
   * The order of the agents around the circle: each next to the one it exchanges the most mail with (a greedy
   * chain from the busiest), so most arrows are short and few cross.
   */
  function circleOrder(graph: Graph): { order: string[]; total: Map<string, number> } {
    const pair = new Map<string, number>();
    const total = new Map<string, number>();
    const key = (a: string, b: string) => (a < b ? `${a}\n${b}` : `${b}\n${a}`);
    for (const edge of graph.edges) {
      pair.set(key(edge.from, edge.to), (pair.get(key(edge.from, edge.to)) ?? 0) + edge.count);
      total.set(edge.from, (total.get(edge.from) ?? 0) + edge.count);
      total.set(edge.to, (total.get(edge.to) ?? 0) + edge.count);
    }
    const between = (a: string, b: string) => pair.get(key(a, b)) ?? 0;
    const left = new Set(graph.nodes);
    const busiest = [...left].sort((a, b) => (total.get(b) ?? 0) - (total.get(a) ?? 0))[0]!;
    const order = [busiest];
    left.delete(busiest);
    while (left.size > 0) {
      const last = order[order.length - 1]!;
      let best = "";
      let score = -1;
      for (const node of left) {
        const value = 2 * between(last, node) + between(order[0]!, node);
        if (value > score || (value === score && (total.get(node) ?? 0) > (total.get(best) ?? 0))) {
          best = node;
          score = value;
        }
      }
      order.push(best);
      left.delete(best);
    }
    return { order, total };
  }

  /** Agents on a circle, as large as their traffic; an arrow per pair that wrote, as thick as its mail, with the count. */
  function drawGraph(graph: Graph): PageElement {
    const SVG = "http://www.w3.org/2000/svg";
    const size = 820;
    const centre = size / 2;
    const radius = size / 2 - 110;
    const svg = document.createElementNS(SVG, "svg");
    const set = (element: PageElement, attributes: Record<string, string | number>) => {
      for (const [name, value] of Object.entries(attributes)) element.setAttribute(name, String(value));
      return element;
    };
    set(svg, { viewBox: `0 0 ${size} ${size}`, width: size, height: size, id: "graph", role: "img" });
    const defs = document.createElementNS(SVG, "defs");
    const marker = set(document.createElementNS(SVG, "marker"), {
      id: "arrow",
      viewBox: "0 0 10 10",
      refX: 10,
      refY: 5,
      markerUnits: "userSpaceOnUse",
      markerWidth: 11,
      markerHeight: 11,
      orient: "auto-start-reverse",
    });
    marker.append(set(document.createElementNS(SVG, "path"), { d: "M 0 0 L 10 5 L 0 10 z", class: "arrowhead" }));
    defs.append(marker);
    svg.append(defs);
    const { order, total } = circleOrder(graph);
    const busiest = Math.max(1, ...total.values());
    const sizeOf = (node: string) => 10 + 14 * Math.sqrt((total.get(node) ?? 0) / busiest);
    const at = new Map<string, { x: number; y: number; angle: number }>();
    order.forEach((node, i) => {
      const angle = (2 * Math.PI * i) / order.length - Math.PI / 2;
      at.set(node, { x: centre + radius * Math.cos(angle), y: centre + radius * Math.sin(angle), angle });
    });
    const most = Math.max(...graph.edges.map((edge) => edge.count));
    const labels: PageElement[] = [];
    for (const edge of graph.edges) {
      const from = at.get(edge.from)!;
      const to = at.get(edge.to)!;
      const group = set(document.createElementNS(SVG, "g"), {
        class: "edge",
        "data-from": edge.from,
        "data-to": edge.to,
        "data-count": edge.count,
      });
      const title = document.createElementNS(SVG, "title");
      title.textContent = `${edge.from} → ${edge.to}: ${edge.count}`;
      group.append(title);
      const width = 1 + (6 * Math.log1p(edge.count)) / Math.log1p(most);
      if (edge.from === edge.to) {
        const out = { x: Math.cos(from.angle), y: Math.sin(from.angle) };
        const loop = sizeOf(edge.from) + 12;
        group.append(
          set(document.createElementNS(SVG, "circle"), {
            cx: from.x + out.x * loop,
            cy: from.y + out.y * loop,
            r: 12,
            class: "loop",
            "stroke-width": width,
          }),
        );
        const label = set(document.createElementNS(SVG, "text"), {
          x: from.x + out.x * (loop + 22),
          y: from.y + out.y * (loop + 22) + 4,
          class: "count",
        });
        label.textContent = String(edge.count);
        labels.push(label);
      } else {
        // Offset to the right of the direction, so a→b and b→a are two arrows side by side; ends at each circle.
        const dx = to.x - from.x;
        const dy = to.y - from.y;
        const length = Math.hypot(dx, dy) || 1;
        const ux = dx / length;
        const uy = dy / length;
        const ox = -uy * 5;
        const oy = ux * 5;
        const start = sizeOf(edge.from) + 2;
        const end = sizeOf(edge.to) + 3;
        group.append(
          set(document.createElementNS(SVG, "line"), {
            x1: from.x + ux * start + ox,
            y1: from.y + uy * start + oy,
            x2: to.x - ux * end + ox,
            y2: to.y - uy * end + oy,
            "stroke-width": width,
            "marker-end": "url(#arrow)",
          }),
        );
        // The count a third of the way from the sender, so the two directions of a pair do not share a spot.
        const label = set(document.createElementNS(SVG, "text"), {
          x: from.x + dx * 0.36 + ox * 2.6,
          y: from.y + dy * 0.36 + oy * 2.6 + 4,
          class: "count",
        });
        label.textContent = String(edge.count);
        labels.push(label);
      }
      svg.append(group);
    }
    for (const label of labels) svg.append(label);
    for (const node of order) {
      const { x, y, angle } = at.get(node)!;
      const anchor = document.createElementNS(SVG, "a");
      anchor.setAttribute("href", `#/agent/${encodeURIComponent(node)}`);
      const r = sizeOf(node);
      anchor.append(set(document.createElementNS(SVG, "circle"), { cx: x, cy: y, r, class: node === state.human ? "node human" : "node" }));
      const cos = Math.cos(angle);
      const label = set(document.createElementNS(SVG, "text"), {
        x: x + cos * (r + 8),
        y: y + Math.sin(angle) * (r + 8) + 4,
        class: "name",
        "text-anchor": cos > 0.3 ? "start" : cos < -0.3 ? "end" : "middle",
      });
      label.textContent = node;
      anchor.append(label);
      svg.append(anchor);
    }
    return svg;
  }

  function composeView(to: string): PageElement {
    return h("div", {}, h("h2", {}, "Compose"), writeForm(null, to));
  }

  // Routing: #/, #/agent/NAME, #/sent/NAME, #/thread/ID, #/search/TEXT, #/graph/PERIOD, #/compose[/TO].

  function route(): string[] {
    return location.hash
      .replace(/^#\/?/, "")
      .split("/")
      .filter((part) => part !== "")
      .map((part) => decodeURIComponent(part));
  }

  /** What the person is typing in a view's form: each field's value, and the field they are in, with its selection. */
  interface Typing {
    draft: string;
    values: [string, string][];
    focus: { name: string; start: number | null; end: number | null } | null;
  }

  function typingIn(view: PageElement): Typing | null {
    const form = view.querySelector("form.write");
    if (!form) return null;
    const focused = document.activeElement;
    const typing: Typing = { draft: form.dataset.draft ?? "", values: [], focus: null };
    for (const field of form.querySelectorAll("[name]")) {
      const name = field.getAttribute("name")!;
      typing.values.push([name, field.value]);
      if (field === focused) typing.focus = { name, start: field.selectionStart ?? null, end: field.selectionEnd ?? null };
    }
    return typing;
  }

  /** Puts what was typed into the same view, rendered again, once it is on the page. */
  function retype(view: PageElement, typing: Typing): void {
    const form = view.querySelector("form.write");
    if (!form) return;
    form.setAttribute("data-draft", typing.draft);
    const field = (name: string) => form.querySelector(`[name="${CSS.escape(name)}"]`);
    for (const [name, value] of typing.values) {
      const twin = field(name);
      if (twin) twin.value = value;
    }
    const focus = typing.focus && field(typing.focus.name);
    if (!focus) return;
    focus.focus();
    if (typing.focus!.start !== null && typing.focus!.end !== null) focus.setSelectionRange?.(typing.focus!.start, typing.focus!.end);
  }

  let rendering = 0;
  /** The hash of the view on the page: rendering it again (the room changed) keeps what the person is typing. */
  let shown: string | null = null;
  async function render(): Promise<void> {
    const [view = "room", arg = ""] = route();
    const mine = ++rendering;
    let content: PageElement;
    try {
      if (view === "agent") content = await mailboxView(arg);
      else if (view === "sent") content = await sentView(arg);
      else if (view === "thread") content = await threadView(arg);
      else if (view === "search") content = await searchView(arg);
      else if (view === "graph") content = await graphView(arg || "24h");
      else if (view === "compose") content = composeView(arg);
      else content = roomView();
    } catch (error) {
      content = h("p", { class: "error" }, (error as Error).message);
    }
    if (mine !== rendering) return;
    const typing = shown === location.hash ? typingIn(main) : null;
    main.replaceChildren(content);
    shown = location.hash;
    if (typing) retype(content, typing);
    document.body.dataset.view = view;
    document.body.dataset.ready = "1";
  }

  // The live feed.

  let refreshTimer: ReturnType<typeof setTimeout> | null = null;
  /** Other views than the room are fetched again after a change, at most a few times a second. */
  function refreshSoon(): void {
    if (refreshTimer !== null) return;
    refreshTimer = setTimeout(() => {
      refreshTimer = null;
      void render();
    }, 250);
  }

  function onRoomEvent(kind: string, data: { id: string; mailbox: string; delivery: Delivery; agents: AgentRow[] } & MailRow): void {
    const inRoom = (route()[0] ?? "room") === "room";
    if (kind === "mail") {
      const row: MailRow = data;
      state.feed.unshift(row);
      if (state.feed.length > FEED_KEPT) state.feed.length = FEED_KEPT;
      const body = inRoom ? document.querySelector("#feed tbody") : null;
      if (body) body.prepend(feedRow(row));
      else if (!inRoom) refreshSoon();
      return;
    }
    if (kind === "delivery" || kind === "archived" || kind === "removed") {
      const index = state.feed.findIndex((row) => row.id === data.id && row.mailbox === data.mailbox);
      if (index !== -1) {
        if (kind === "removed") state.feed.splice(index, 1);
        else if (kind === "archived") state.feed[index] = { ...state.feed[index]!, archived: true };
        else state.feed[index] = { ...state.feed[index]!, delivery: data.delivery };
      }
      if (!inRoom) {
        refreshSoon();
        return;
      }
      const old = document.querySelector(`#feed tr[data-id="${CSS.escape(data.id)}"][data-mailbox="${CSS.escape(data.mailbox)}"]`);
      if (old && kind === "removed") old.remove();
      else if (old && index !== -1) old.replaceWith(feedRow(state.feed[index]!));
      return;
    }
    if (kind === "agents") {
      state.agents = data.agents;
      const table = inRoom ? document.getElementById("agents") : null;
      if (table) table.replaceWith(agentsTable());
    }
  }

  function connect(): void {
    const events = new EventSource(`/events?${new URLSearchParams({ token })}`);
    for (const kind of ["mail", "delivery", "archived", "removed", "agents"]) {
      events.addEventListener(kind, (event) => onRoomEvent(kind, JSON.parse(event.data)));
    }
    let lost = false;
    events.addEventListener("open", () => {
      state.connected = true;
      document.body.dataset.live = "1";
      setStatus("live", "ok");
      // Events sent while the stream was down are gone: load the room again (a restarted server has another token,
      // and then this fails and says so).
      if (lost) void load().then((loaded) => (loaded ? render() : undefined));
      lost = false;
    });
    events.addEventListener("error", () => {
      lost = true;
      state.connected = false;
      document.body.dataset.live = "0";
      setStatus("disconnected: is agentmail web still running? Retrying…", "error");
    });
  }

  /** The room's state from the server; false (and why, on the page) when it cannot be had. */
  async function load(): Promise<boolean> {
    try {
      const room = await api<{ store: string; human: string | null; readOnly: boolean; agents: AgentRow[]; feed: MailRow[] }>("/api/room");
      Object.assign(state, { store: room.store, human: room.human, readOnly: room.readOnly, agents: room.agents, feed: room.feed });
      who.textContent = `${room.store} · ${room.human === null ? "no name set (read only)" : `you are ${room.human}`}${room.readOnly ? " · read-only" : ""}`;
      return true;
    } catch (error) {
      main.replaceChildren(h("p", { class: "error" }, (error as Error).message));
      return false;
    }
  }

  async function start(): Promise<void> {
    if (!(await load())) return;
    page.addEventListener("hashchange", () => void render());
    await render();
    // When the first view was on the screen, for bench/web.ts (navigation start to this, in the browser's clock).
    performance.mark("agentmail-first-render");
    connect();
  }

  void start();
}
