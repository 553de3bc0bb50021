/**
 * The page's script, served as `/app.js` (bundled by web/bundle-page.ts): it loads the room from the server, draws
 * the view the hash names, and follows the room's events live. The views are pure (data to nodes, the *-view.ts
 * files); this file fetches, mounts and patches.
 */
import type { AgentRow, ClaimRow, Delivery, Graph, MailmanView, MailRow, MessageView, NeedRow } from "../../room/model.ts";
import { Api } from "./api.ts";
import { claimsView } from "./claims-view.ts";
import { composeView } from "./compose-view.ts";
import type { PageActions, PageState, StatusKind } from "./context.ts";
import { graphView } from "./graph-view.ts";
import { mailboxView, searchView, sentView } from "./lists-view.ts";
import { mountElement } from "./mount.ts";
import { agentsSection, feedRow, needsSection, roomView } from "./room-view.ts";
import { routeOf } from "./router.ts";
import { threadView } from "./thread-view.ts";
import { retype, typingIn } from "./typing.ts";
import { h, type VNode } from "./vnode.ts";

/** Rows of the live feed the page keeps. */
const FEED_KEPT = 500;

const api = new Api(new URLSearchParams(location.search).get("token") ?? "");
const state: PageState = {
  store: "",
  human: null,
  readOnly: true,
  observer: false,
  agents: [],
  feed: [],
  needs: [],
  claims: [],
  mailman: null,
  problemsOnly: false,
  connected: false,
};
const main = document.getElementById("main")!;
const status = document.getElementById("status")!;
const who = document.getElementById("who")!;

function setStatus(text: string, kind: StatusKind = "info"): void {
  status.textContent = text;
  status.className = `status status-${kind}`;
}

const actions: PageActions = {
  async act(path, body) {
    // Until the answer comes, the status line must not show the outcome of an earlier action as this one's.
    setStatus("working…");
    try {
      await api.post(path, body);
      setStatus("done", "ok");
      void render();
    } catch (error) {
      setStatus((error as Error).message, "error");
    }
  },
  post: (path, body) => api.post(path, body),
  go(hash, keep = false) {
    keepStatus = keep;
    location.hash = hash;
  },
  redraw: () => void render(),
  setStatus,
};

async function viewOf(view: string, arg: string): Promise<VNode> {
  switch (view) {
    case "agent":
      return mailboxView(arg, (await api.get<{ items: MailRow[] }>("/api/mailbox", { name: arg })).items);
    case "sent":
      return sentView(arg, (await api.get<{ messages: MessageView[] }>("/api/sent", { name: arg })).messages);
    case "thread":
      return threadView((await api.get<{ messages: MessageView[] }>("/api/thread", { id: arg })).messages, state, actions);
    case "search": {
      const found = arg === "" ? null : (await api.get<{ messages: MessageView[] }>("/api/search", { q: arg })).messages;
      return searchView(arg, found, actions);
    }
    case "graph": {
      const period = arg || "24h";
      return graphView(await api.get<Graph>("/api/graph", { period }), period, state.human, actions);
    }
    case "compose":
      return composeView(state, actions, arg);
    case "needs":
      return needsSection(state.needs);
    case "claims":
      return claimsView(state, actions);
    default:
      return roomView(state, actions);
  }
}

/** The next view drawn keeps the status line (a send that shows its thread says it was sent). */
let keepStatus = false;
let rendering = 0;
/** The hash of the view on the page: rendering it again (the room changed) keeps what the person is typing. */
let shown: string | null = null;

async function render(): Promise<void> {
  const { view } = routeOf(location.hash);
  const mine = ++rendering;
  let content: Element;
  try {
    content = mountElement(await viewOf(view, routeOf(location.hash).arg));
  } catch (error) {
    content = mountElement(h("p", { class: "error" }, (error as Error).message));
  }
  if (mine !== rendering) return;
  // The outcome of a write belongs to the view it was made in: another view starts with the status of the page.
  if (shown !== null && shown !== location.hash && !keepStatus) setStatus(state.connected ? "live" : "", state.connected ? "ok" : "info");
  keepStatus = false;
  const typing = shown === location.hash ? typingIn(main) : null;
  main.replaceChildren(content);
  shown = location.hash;
  if (typing) retype(content, typing);
  document.body.dataset.view = view;
  document.body.dataset.ready = "1";
}

let refreshTimer: ReturnType<typeof setTimeout> | null = null;
/** Other views than the room are fetched again after a change, at most a few times a second. */
function refreshSoon(): void {
  if (refreshTimer !== null) return;
  refreshTimer = setTimeout(() => {
    refreshTimer = null;
    void render();
  }, 250);
}

type EventData = {
  id: string;
  mailbox: string;
  delivery: Delivery;
  agents: AgentRow[];
  needs: NeedRow[];
  claims: ClaimRow[];
  mailman: MailmanView | null;
} & MailRow;

/** Puts a part of the room drawn again in place of its old self, when the room is on the page. */
function replace(id: string, node: VNode): void {
  document.getElementById(id)?.replaceWith(mountElement(node));
}

function onRoomEvent(kind: string, data: EventData): void {
  const inRoom = routeOf(location.hash).view === "room";
  if (kind === "mail") {
    state.feed.unshift(data);
    if (state.feed.length > FEED_KEPT) state.feed.length = FEED_KEPT;
    const body = inRoom ? document.querySelector("#feed tbody") : null;
    if (body) body.prepend(mountElement(feedRow(data)));
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
    else if (old && index !== -1) old.replaceWith(mountElement(feedRow(state.feed[index]!)));
    return;
  }
  const view = routeOf(location.hash).view;
  if (kind === "agents" || kind === "mailman" || kind === "claims") {
    if (kind === "agents") state.agents = data.agents;
    if (kind === "mailman") state.mailman = data.mailman;
    if (kind === "claims") state.claims = data.claims;
    if (inRoom) replace("agents-section", agentsSection(state, actions));
    else if (kind === "claims" && view === "claims") refreshSoon();
  }
  if (kind === "needs") {
    state.needs = data.needs;
    if (inRoom || view === "needs") replace("needs-section", needsSection(state.needs));
  }
}

function connect(): void {
  const events = api.events();
  for (const kind of ["mail", "delivery", "archived", "removed", "agents", "needs", "claims", "mailman"]) {
    events.addEventListener(kind, (event) => onRoomEvent(kind, JSON.parse((event as MessageEvent<string>).data)));
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
    const room =
      await api.get<Pick<PageState, "store" | "human" | "readOnly" | "observer" | "agents" | "feed" | "needs" | "claims" | "mailman">>(
        "/api/room",
      );
    const { store, human, readOnly, observer, agents, feed, needs, claims, mailman } = room;
    Object.assign(state, { store, human, readOnly, observer, agents, feed, needs, claims, mailman });
    const person = observer ? "observer (reads, never writes)" : human === null ? "no name set (read only)" : `you are ${human}`;
    who.textContent = `${store} · ${person}${readOnly && !observer ? " · read-only" : ""}`;
    return true;
  } catch (error) {
    main.replaceChildren(mountElement(h("p", { class: "error" }, (error as Error).message)));
    return false;
  }
}

async function start(): Promise<void> {
  if (!(await load())) return;
  addEventListener("hashchange", () => void render());
  await render();
  // When the first view was on the screen, for bench/web.ts (navigation start to this, in the browser's clock).
  performance.mark("agentmail-first-render");
  connect();
}

void start();
