/**
 * The page's views in process, without a browser: each is a pure function from the room's data to nodes
 * (src/web/page/vnode.ts), read here as the DOM would be. The browser itself (mounting, the live feed, typing kept
 * across a redraw) is in test/commands/web.test.ts.
 */
import { describe, expect, test } from "bun:test";
import type { AgentRow, ClaimRow, MailRow, MessageView, NeedRow } from "../../../../src/room/model.ts";
import { answerOf } from "../../../../src/web/page/api.ts";
import { checkTo, composeView, submitWrite, writeForm } from "../../../../src/web/page/compose-view.ts";
import type { PageActions, PageState } from "../../../../src/web/page/context.ts";
import { ago, clock } from "../../../../src/web/page/format.ts";
import { circleOrder, graphView } from "../../../../src/web/page/graph-view.ts";
import { mailboxView, messageList, searchView, sentView } from "../../../../src/web/page/lists-view.ts";
import { claimsView, timeLeft } from "../../../../src/web/page/claims-view.ts";
import { agentsSection, agentsTable, feedRow, mailmanLine, needsTable, roomView } from "../../../../src/web/page/room-view.ts";
import { routeOf } from "../../../../src/web/page/router.ts";
import { messageCard, threadView } from "../../../../src/web/page/thread-view.ts";
import { find, findAll, textOf, toHtml } from "./nodes.ts";

const HOSTILE = `<script>alert(1)</script><img src=x onerror=alert(2)>`;
const NOW = "2026-01-01T12:00:00.000Z";

function agent(name: string, extra: Partial<AgentRow> = {}): AgentRow {
  return {
    name,
    project: null,
    status: "ready",
    cli: null,
    unread: 0,
    last_seen: null,
    activity: null,
    host: null,
    reach: "pull",
    channel: null,
    claims: 0,
    problem: null,
    human: false,
    person: false,
    ...extra,
  };
}
function row(id: string, extra: Partial<MailRow> = {}): MailRow {
  return {
    id,
    mailbox: "bob",
    from: "alice",
    created_at: NOW,
    subject: null,
    type: "message",
    priority: "normal",
    needs_response: false,
    thread: id,
    in_reply_to: null,
    archived: false,
    delivery: { state: "stored", at: NOW },
    preview: "hello",
    ...extra,
  };
}
function message(id: string, copies: MessageView["copies"], extra: Partial<MessageView> = {}): MessageView {
  return {
    id,
    from: "bob",
    created_at: NOW,
    subject: "Merge?",
    type: "message",
    priority: "normal",
    needs_response: false,
    thread: id,
    in_reply_to: null,
    body: "may I merge?",
    copies,
    ...extra,
  };
}
const state = (extra: Partial<PageState> = {}): PageState => ({
  store: "file /x",
  human: "ana",
  readOnly: false,
  observer: false,
  agents: [],
  feed: [],
  needs: [],
  claims: [],
  mailman: null,
  problemsOnly: false,
  connected: true,
  ...extra,
});

/** Actions that note what the views asked for. */
function recorder(answer: (path: string, body: unknown) => Promise<unknown> = async () => ({ id: "abc12345" })) {
  const calls: string[] = [];
  const actions: PageActions = {
    act: (path, body) => void calls.push(`act ${path} ${JSON.stringify(body)}`),
    post: async <T>(path: string, body: unknown) => {
      calls.push(`post ${path} ${JSON.stringify(body)}`);
      return (await answer(path, body)) as T;
    },
    go: (hash, keep) => void calls.push(`go ${hash}${keep ? " (status kept)" : ""}`),
    redraw: () => void calls.push("redraw"),
    setStatus: (text, kind = "info") => void calls.push(`status ${kind} ${text}`),
  };
  return { calls, actions };
}
const event = () => ({ preventDefault() {} }) as unknown as Event;

describe("the room", () => {
  test("agents: the person marked, unread counts standing out, a host column only when some agent has a host", () => {
    const table = agentsTable([agent("alice", { unread: 2 }), agent("ana", { human: true, status: null })]);
    expect(findAll(table, (node) => node.tag === "th").map(textOf)).toEqual([
      "Agent",
      "Status",
      "CLI",
      "Unread",
      "Last seen",
      "Reach",
      "Problem",
    ]);
    expect(textOf(find(table, "tr", { "data-agent": "ana" }))).toContain("ana (you)");
    expect(find(find(table, "tr", { "data-agent": "alice" }), "td", { class: "unread num" })).toBeDefined();
    const hosts = agentsTable([agent("alice", { host: "build-1" })]);
    expect(findAll(hosts, (node) => node.tag === "th").map(textOf)).toContain("Host");
  });

  test("a feed row shows a hostile subject as text, links only to the page's own views, and its state", () => {
    const shown = feedRow(row("id1", { preview: HOSTILE, from: "a/b?c", delivery: { state: "read", at: NOW } }));
    const html = toHtml(shown);
    expect(html).not.toContain("<script>");
    expect(html).not.toContain("<img");
    expect(textOf(shown)).toContain(HOSTILE);
    expect(findAll(shown, (node) => node.tag === "a").map((node) => node.attrs.href)).toEqual([
      "#/agent/a%2Fb%3Fc",
      "#/agent/bob",
      "#/thread/id1",
    ]);
    expect(find(shown, "span", { "data-state": "read" })).toBeDefined();
    expect(textOf(feedRow(row("id2", { preview: "" })))).toContain("(empty)");
  });

  test("the room view holds the agents and the feed", () => {
    const view = roomView(state({ agents: [agent("alice")], feed: [row("id1"), row("id2")] }), recorder().actions);
    expect(findAll(find(view, "table", { id: "feed" }), (node) => node.tag === "tr" && "data-id" in node.attrs)).toHaveLength(2);
    expect(find(view, "table", { id: "agents" })).toBeDefined();
  });
});

describe("a thread", () => {
  const own = message("q1", [{ mailbox: "ana", archived: false, delivery: { state: "stored", at: NOW } }]);

  test("the person's own copy can be acknowledged and archived; the buttons say so to the server", () => {
    const { calls, actions } = recorder();
    const card = messageCard(own, state(), actions);
    find(card, "button", { "data-action": "ack" }).on!.click!({} as Element, event());
    find(card, "button", { "data-action": "archive" }).on!.click!({} as Element, event());
    expect(calls).toEqual([`act /api/ack {"id":"q1"}`, `act /api/archive {"id":"q1"}`]);
  });

  test("no buttons on another's copy, on a read-only page, or without the person's name", () => {
    const theirs = message("q2", [{ mailbox: "bob", archived: false, delivery: { state: "stored", at: NOW } }]);
    const { actions } = recorder();
    expect(findAll(messageCard(theirs, state(), actions), (node) => node.tag === "button")).toEqual([]);
    expect(findAll(messageCard(own, state({ readOnly: true }), actions), (node) => node.tag === "button")).toEqual([]);
    expect(findAll(messageCard(own, state({ human: null }), actions), (node) => node.tag === "button")).toEqual([]);
  });

  test("the reply form answers the last message, from the person's copy", () => {
    const { actions } = recorder();
    const answer = message("r1", [{ mailbox: "ana", archived: false, delivery: { state: "read", at: NOW } }], { from: "bob" });
    const view = threadView([own, answer], state(), actions);
    expect(textOf(find(view, "h2"))).toBe("Thread: Merge?");
    expect(findAll(view, (node) => node.tag === "article")).toHaveLength(2);
    expect(textOf(find(view, "form", { id: "reply-form" }))).toContain("Reply as ana to bob");
  });
});

describe("writing", () => {
  test("a read-only page and a page without the person's name say why there is no form", () => {
    const { actions } = recorder();
    expect(textOf(writeForm(state({ readOnly: true }), actions, null))).toContain("read-only");
    expect(textOf(writeForm(state({ human: null }), actions, null))).toContain("export AGENTMAIL_HUMAN=<name>");
    const compose = composeView(state(), actions, "bob");
    expect(find(compose, "input", { name: "to" }).attrs.value).toBe("bob");
    expect(find(compose, "select", { name: "priority" }).children).toHaveLength(4);
  });

  /** A form as submitWrite reads it: its fields by name, reset, and the document around it. */
  function form(values: Record<string, string>) {
    let resets = 0;
    const element = {
      dataset: { draft: "7" },
      querySelector: (selector: string) => {
        const name = /\[name="([^"]+)"\]/.exec(selector)?.[1];
        return name !== undefined && name in values ? { value: values[name] } : null;
      },
      reset: () => void resets++,
      ownerDocument: { querySelector: () => null },
    };
    return { element: element as unknown as HTMLFormElement, resets: () => resets };
  }

  test("a send says sending…, then sent ID; the form is emptied and the thread shown", async () => {
    const { calls, actions } = recorder();
    const sent = form({ to: "bob", subject: "", type: "task", priority: "high", body: "do it" });
    await submitWrite(sent.element, actions, null);
    expect(calls).toEqual([
      "status info sending…",
      `post /api/send {"to":"bob","type":"task","priority":"high","body":"do it"}`,
      "status ok sent abc12345",
      "go #/thread/abc12345 (status kept)",
    ]);
    expect(sent.resets()).toBe(1);
  });

  test("a failed send keeps what was typed and says why", async () => {
    const { calls, actions } = recorder(async () => {
      throw new Error('no agent named "bobb"; did you mean "bob"?');
    });
    const failed = form({ body: "yes" });
    await submitWrite(failed.element, actions, { id: "q1", mailbox: "ana", from: "bob" });
    expect(calls.at(-1)).toBe(`status error not sent: no agent named "bobb"; did you mean "bob"?`);
    expect(failed.resets()).toBe(0);
  });
});

describe("lists, search and the graph", () => {
  test("a mailbox, sent mail and search results; nothing found says so", () => {
    expect(textOf(mailboxView("bob", []))).toContain("No mail.");
    expect(find(mailboxView("bob", [row("id1")]), "table", { id: "mailbox" })).toBeDefined();
    const sent = sentView("bob", [message("m1", [{ mailbox: "alice", archived: true, delivery: { state: "read", at: NOW } }])]);
    expect(find(sent, "span", { "data-state": "archived" })).toBeDefined();
    expect(textOf(messageList([], "results"))).toBe("Nothing found.");
    const { calls, actions } = recorder();
    const search = searchView("", null, actions);
    expect(findAll(search, (node) => node.tag === "table")).toEqual([]);
    const input = { value: "deploy now" };
    find(search, "form").on!.submit!({ querySelector: () => input } as unknown as Element, event());
    expect(calls).toEqual(["go #/search/deploy%20now"]);
  });

  test("the graph puts the agents that write to each other most side by side; each edge carries its count", () => {
    const graph = {
      since: null,
      nodes: ["a", "b", "c", "d"],
      edges: [
        { from: "a", to: "b", count: 9 },
        { from: "c", to: "d", count: 5 },
        { from: "b", to: "c", count: 1 },
        { from: "d", to: "d", count: 2 },
      ],
    };
    const { order } = circleOrder(graph);
    const at = (name: string) => order.indexOf(name);
    expect(Math.abs(at("a") - at("b"))).toBe(1);
    expect(Math.abs(at("c") - at("d"))).toBe(1);
    const { calls, actions } = recorder();
    const view = graphView(graph, "7d", "a", actions);
    expect(findAll(view, (node) => node.tag === "g").map((node) => node.attrs["data-count"])).toEqual(["9", "5", "1", "2"]);
    expect(find(view, "circle", { class: "node human" })).toMatchObject({ svg: true });
    find(view, "select", { name: "period" }).on!.change!({ value: "all" } as unknown as Element, event());
    expect(calls).toEqual(["go #/graph/all"]);
    expect(textOf(graphView({ since: null, nodes: [], edges: [] }, "1h", null, actions))).toContain("No mail in this period.");
  });
});

describe("the rest", () => {
  test("routes, times and answers", async () => {
    expect(routeOf("")).toEqual({ view: "room", arg: "" });
    expect(routeOf("#/thread/a%2Fb")).toEqual({ view: "thread", arg: "a/b" });
    expect(routeOf("#/search/%E0%A4")).toEqual({ view: "search", arg: "%E0%A4" });
    const now = new Date("2026-01-01T12:00:00");
    expect(clock("2026-01-01T11:59:58", now)).toBe("11:59:58");
    expect(clock("2025-12-31T10:00:00", now)).toBe("2025-12-31 10:00:00");
    expect(clock(null, now)).toBe("?");
    expect([ago(null), ago(NOW, Date.parse(NOW) + 5_000), ago(NOW, Date.parse(NOW) + 300_000)]).toEqual(["-", "5s ago", "5m ago"]);
    expect([ago(NOW, Date.parse(NOW) + 7_200_000), ago(NOW, Date.parse(NOW) + 3 * 86_400_000)]).toEqual(["2h ago", "3d ago"]);
    const reply = (status: number, text: string) => ({ ok: status < 400, status, text: async () => text });
    expect(await answerOf(reply(200, '{"id":"x"}'))).toEqual({ id: "x" });
    await expect(answerOf(reply(400, '{"error":{"message":"no such agent"}}'))).rejects.toThrow("no such agent");
    await expect(answerOf(reply(403, "403 forbidden: needs the token\n"))).rejects.toThrow("403 forbidden: needs the token");
    await expect(answerOf(reply(500, "{}"))).rejects.toThrow("HTTP 500");
  });
});

describe("what needs the person, problems, claims, the mailman", () => {
  const need = (kind: NeedRow["kind"], extra: Partial<NeedRow> = {}): NeedRow => ({
    kind,
    id: "q1",
    mailbox: "ana",
    from: "bob",
    at: NOW,
    preview: "may I merge?",
    why: "to you, unread",
    ...extra,
  });

  test("each row that needs the person leads to its thread, a claim's to the claims; nothing says so", () => {
    const table = needsTable([need("to-you"), need("claim", { id: null, preview: "src/auth/**", mailbox: "carol", from: "bob" })]);
    expect(find(find(table, "tr", { "data-kind": "to-you" }), "a").attrs.href).toBe("#/thread/q1");
    expect(find(find(table, "tr", { "data-kind": "claim" }), "a").attrs.href).toBe("#/claims");
    expect(textOf(needsTable([]))).toBe("Nothing needs you now.");
  });

  test("an agent with a problem is marked with the reason; the list can show only them", () => {
    const stalled = agent("bob", { problem: { kind: "stalled", reason: "2 unread messages, the oldest for 21m; nothing read since" } });
    const shown = state({ agents: [agent("alice"), stalled] });
    const { calls, actions } = recorder();
    const section = agentsSection(shown, actions);
    expect(find(section, "tr", { "data-agent": "bob", "data-problem": "stalled" })).toBeDefined();
    expect(textOf(find(section, "tr", { "data-agent": "bob" }))).toContain("stalled 2 unread messages, the oldest for 21m");
    find(section, "button", { id: "problems-only" }).on!.click!({} as Element, event());
    expect([shown.problemsOnly, calls]).toEqual([true, ["redraw"]]);
    const filtered = agentsSection(shown, actions);
    expect(findAll(filtered, (node) => node.tag === "tr" && "data-agent" in node.attrs).map((node) => node.attrs["data-agent"])).toEqual([
      "bob",
    ]);
  });

  test("a claim of a gone holder has a Release button (not on a read-only page); a live one none", () => {
    const claim = (id: string, extra: Partial<ClaimRow>): ClaimRow => ({
      id,
      path: "src/auth/**",
      holder: "bob",
      project: null,
      shared: false,
      reason: "refactor",
      claimed_at: NOW,
      expires_at: new Date(Date.now() + 3_600_000).toISOString(),
      waiters: ["carol"],
      state: "live",
      why: null,
      holder_gone: false,
      ...extra,
    });
    const claims = [
      claim("c1", {}),
      claim("c2", { holder: "dave", state: "ended", why: "its holder's window is closed", holder_gone: true }),
    ];
    const { calls, actions } = recorder();
    const view = claimsView(state({ claims }), actions);
    expect(findAll(find(view, "tr", { "data-claim": "c1" }), (node) => node.tag === "button")).toEqual([]);
    expect(textOf(find(view, "tr", { "data-claim": "c1" }))).toMatch(/src\/auth\/\*\*bobexclusiverefactor(59m|1h) leftcarol/);
    find(view, "button", { "data-action": "release" }).on!.click!({} as Element, event());
    expect(calls).toEqual([`act /api/release {"id":"c2"}`]);
    expect(findAll(claimsView(state({ claims, readOnly: true }), actions), (node) => node.tag === "button")).toEqual([]);
    expect(timeLeft(NOW)).toBe("ran out");
  });

  test("the mailman: not running, running with its last sweep, failing", () => {
    expect(textOf(mailmanLine(null))).toContain("not known here");
    expect(
      textOf(mailmanLine({ running: false, pid: null, since: null, last_sweep_at: null, last_failure: null, last_failure_at: null })),
    ).toContain("not running for this store");
    const failing = mailmanLine({
      running: true,
      pid: 42,
      since: NOW,
      last_sweep_at: NOW,
      last_failure: "EIO write",
      last_failure_at: NOW,
    });
    expect(textOf(failing)).toContain("running (pid 42)");
    expect(textOf(failing)).toContain("last failure");
    expect(failing.attrs.class).toBe("mailman failing");
  });

  test("Enter in To checks it as its send will resolve it: whom it reaches, or why not", async () => {
    const shown = { textContent: "", className: "" };
    let focused = "";
    const input = {
      isConnected: true,
      value: "alice,bob",
      parentElement: { querySelector: () => shown },
      form: { querySelector: () => ({ focus: () => void (focused = "subject") }) },
      focus: () => void (focused = "to"),
    } as unknown as HTMLInputElement;
    const ok = recorder(async () => ({ to: ["alice", "bob@lib"], warnings: [] }));
    await checkTo(input, ok.actions);
    expect([shown.textContent, shown.className, focused]).toEqual(["reaches alice, bob@lib", "to-check ok", "subject"]);
    const refused = recorder(async () => {
      throw new Error('no agent named "bobb"');
    });
    await checkTo(input, refused.actions);
    expect([shown.textContent, shown.className, focused]).toEqual(['no agent named "bobb"', "to-check error", "to"]);
    expect(refused.calls).toEqual([`post /api/check {"to":"alice,bob"}`]);
  });
});
