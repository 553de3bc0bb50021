/**
 * `agentmail watch` on a terminal: the room live, redrawn whenever the store's feed brings a change, a key is typed
 * or the terminal is resized. Three views: the room (what needs the person first, the agents, the mail), what needs
 * the person (`n`), and the claims with the mailman (`l`); a thread opens over any of them. Keys: ↑/↓ (k/j) move,
 * PgUp/PgDn, Tab moves between the agents and the mail, Enter opens (a thread; an agent's mail), c composes, r
 * replies, a filters by agent, / searches, p shows only agents with problems, Esc goes back or clears, q quits.
 */
import { AgentmailError, toAgentmailError } from "../mail/errors.ts";
import { decodeKeys, readKeys, type Key, type KeyInput } from "../input/keys.ts";
import { openScreen, type Line, type Screen } from "../output/screen.ts";
import type { Invocation } from "../identity/invocation.ts";
import { checkAsHuman, replyAddressee, replyAsHuman, requireHuman, sendAsHuman } from "../actions/human.ts";
import type { AgentRow, MailItem } from "../room/model.ts";
import type { Room, RoomFilter } from "../room/room.ts";
import {
  agentLines,
  claimLine,
  feedLine,
  headerLine,
  keyLine,
  mailmanLine,
  needLine,
  ruleLine,
  sectionLine,
  threadLines,
  wrapWords,
} from "./view.ts";

/** How long the view waits for a change before it looks anyway (a read on Redis rings nothing). */
const LOOK_MS = 1_000;
/** At most this many lines of an error are shown (wrapped), above the key line. */
const ERROR_LINES = 6;

/** A failure as the person in the room reads it: its next step in the room's terms (mail/next-steps.ts). */
const inRoomTerms = (error: unknown): string => toAgentmailError(error).wordedFor("room");

type PromptKind = "to" | "subject" | "body" | "reply" | "agent" | "search";

interface Prompt {
  kind: PromptKind;
  value: string;
  /** What the earlier prompts of a compose collected. */
  draft: { to?: string; subject?: string; replyTo?: MailItem };
}

const LABELS: Record<PromptKind, string> = {
  to: "To (name, name@project, a,b, @all, @GROUP, role:ROLE): ",
  subject: "Subject (Enter for none): ",
  body: "Message (Ctrl-J new line, Enter sends): ",
  reply: "Reply: ",
  agent: "Show mail of agent (Enter for all): ",
  search: "Search: ",
};

const ROOM_KEYS = "tab agents  enter thread  c compose  r reply  n needs  l claims  p problems  q";
const NEEDS_KEYS = "↑↓ move  enter thread  r reply  esc back  q quit";
const CLAIMS_KEYS = "↑↓ scroll  esc back  q quit";
const THREAD_KEYS = "↑↓ scroll  r reply  esc back  q quit";

/** Where a moving key takes the selection of a list of `length` rows from `index` (a page is `page` rows); null for other keys. */
function moved(key: Key, index: number, length: number, page: number): number | null {
  const char = key.name === "char" ? key.char : null;
  if (key.name === "down" || char === "j") return index + 1;
  if (key.name === "up" || char === "k") return index - 1;
  if (key.name === "pagedown") return index + page;
  if (key.name === "pageup") return index - page;
  if (key.name === "home" || char === "g") return 0;
  if (key.name === "end" || char === "G") return length - 1;
  return null;
}

export interface WatchOptions {
  invocation: Invocation;
  human: string | null;
  store: string;
}

export class WatchApp {
  readonly #room: Room;
  readonly #options: WatchOptions;
  #screen: Screen | null = null;
  #keys: KeyInput | null = null;
  #view: "room" | "needs" | "claims" = "room";
  /** Which list of the room has the arrow keys. */
  #focus: "mail" | "agents" = "mail";
  #filter: RoomFilter = {};
  /** Only the agents with a problem in the list. */
  #problemsOnly = false;
  /** The selected copy, by mailbox and id, so it stays selected as mail arrives above it. */
  #selected: { mailbox: string; id: string } | null = null;
  /** The selected agent by name, and the first agent row shown. */
  #agent: string | null = null;
  #agentFirst = 0;
  #need = 0;
  #claimsScroll = 0;
  #thread: { id: string; scroll: number } | null = null;
  #prompt: Prompt | null = null;
  #status: { text: string; error: boolean } | null = null;
  /** Keys typed while a To is checked: typed once the check is done, so typing ahead is never lost. */
  #held: Key[] | null = null;
  #done = false;
  #finish: () => void = () => {};
  #visible: MailItem[] = [];

  constructor(room: Room, options: WatchOptions) {
    this.#room = room;
    this.#options = options;
  }

  /** Runs until q, Ctrl-C or a signal; the terminal is restored whatever happens. */
  async run(): Promise<void> {
    const finished = new Promise<void>((resolve) => {
      this.#finish = resolve;
    });
    const quit = () => this.#quit();
    const signals = ["SIGTERM", "SIGHUP", "SIGINT"] as const;
    for (const signal of signals) process.on(signal, quit);
    try {
      this.#screen = openScreen(() => this.#draw());
      this.#keys = readKeys((key) => this.#onKey(key));
      this.#draw();
      while (!this.#done) {
        // A wait that fails (the Redis server away) waits out its time instead: the look below says why.
        await Promise.race([this.#room.wait(LOOK_MS).catch(() => new Promise((resolve) => setTimeout(resolve, LOOK_MS))), finished]);
        if (this.#done) break;
        try {
          if ((await this.#room.step()).length > 0) this.#draw();
        } catch (error) {
          this.#say(`cannot read the mail store: ${(error as Error).message}`, true);
        }
      }
    } finally {
      for (const signal of signals) process.off(signal, quit);
      this.#keys?.close();
      this.#screen?.close();
    }
  }

  #quit(): void {
    if (this.#done) return;
    this.#done = true;
    this.#finish();
  }

  #say(text: string, error = false): void {
    this.#status = { text, error };
    this.#draw();
  }

  /** Typing a key as if it came from the terminal: for tests of the key handling. */
  type(text: string): void {
    for (const key of decodeKeys(text)) this.#onKey(key);
  }

  /** Resolves once no To is being checked (the keys typed meanwhile are handled): for tests. */
  async settled(): Promise<void> {
    while (this.#held !== null) await new Promise((resolve) => setTimeout(resolve, 5));
  }

  #onKey(key: Key): void {
    if (key.name === "ctrl-c") {
      this.#quit();
      return;
    }
    if (this.#held !== null) {
      this.#held.push(key);
      return;
    }
    if (this.#prompt) this.#onPromptKey(this.#prompt, key);
    else if (this.#thread) this.#onThreadKey(this.#thread, key);
    else if (this.#view === "needs") this.#onNeedsKey(key);
    else if (this.#view === "claims") this.#onClaimsKey(key);
    else if (this.#focus === "agents") this.#onAgentsKey(key);
    else this.#onFeedKey(key);
    this.#draw();
  }

  /** Keys every list shares; true when the key was one of them. */
  #onCommonKey(key: Key): boolean {
    const char = key.name === "char" ? key.char : null;
    if (char === "q") this.#quit();
    else if (char === "c") this.#ask("to", "", {});
    else if (char === "n" || char === "l") {
      this.#view = char === "n" ? "needs" : "claims";
      // What the last write said belongs to the view it was made in.
      if (!this.#status?.error) this.#status = null;
    } else if (char === "/") this.#ask("search", this.#filter.text ?? "", {});
    else if (char === "a") this.#ask("agent", this.#filter.agent ?? "", {});
    else if (char === "p") {
      this.#problemsOnly = !this.#problemsOnly;
      this.#agentFirst = 0;
    } else return false;
    return true;
  }

  #onFeedKey(key: Key): void {
    const index = this.#selectedIndex();
    const move = (to: number) => {
      const item = this.#visible[Math.max(0, Math.min(this.#visible.length - 1, to))];
      if (item) this.#selected = { mailbox: item.mailbox, id: item.id };
    };
    const char = key.name === "char" ? key.char : null;
    const to = moved(key, index, this.#visible.length, Math.max(1, this.#layout(this.#screenRows()).feed - 1));
    if (to !== null) move(to);
    else if (key.name === "tab") this.#focus = "agents";
    else if (key.name === "enter") {
      const item = this.#visible[index];
      if (item) this.#thread = { id: item.id, scroll: 0 };
    } else if (char === "r") {
      const item = this.#visible[index];
      if (item) this.#ask("reply", "", { replyTo: item });
    } else if (key.name === "escape") {
      this.#filter = {};
      this.#status = null;
    } else this.#onCommonKey(key);
  }

  /** The agents the list shows (all, or those with a problem). */
  #agents(): AgentRow[] {
    const agents = this.#room.agents();
    return this.#problemsOnly ? agents.filter((agent) => agent.problem !== null) : agents;
  }

  #agentIndex(agents: AgentRow[]): number {
    const index = agents.findIndex((agent) => agent.name === this.#agent);
    return index === -1 ? 0 : index;
  }

  #onAgentsKey(key: Key): void {
    const agents = this.#agents();
    const index = this.#agentIndex(agents);
    const char = key.name === "char" ? key.char : null;
    const to = moved(key, index, agents.length, Math.max(1, this.#layout(this.#screenRows()).agents - 2));
    const agent = to === null ? undefined : agents[Math.max(0, Math.min(agents.length - 1, to))];
    if (agent) this.#agent = agent.name;
    else if (to !== null) return;
    else if (key.name === "tab" || key.name === "escape") this.#focus = "mail";
    else if (key.name === "enter") {
      const agent = agents[index];
      if (agent) {
        this.#filter = { ...this.#filter, agent: agent.name };
        this.#focus = "mail";
      }
    } else if (char === "r") {
      const agent = agents[index];
      if (agent) this.#ask("to", agent.name, {});
    } else this.#onCommonKey(key);
  }

  #onNeedsKey(key: Key): void {
    const needs = this.#room.needs();
    const char = key.name === "char" ? key.char : null;
    this.#need = Math.max(0, Math.min(this.#need, needs.length - 1));
    const need = needs[this.#need];
    const copy = need?.id ? (this.#room.item(need.mailbox, need.id) ?? this.#room.anyCopy(need.id)) : null;
    if (key.name === "down" || char === "j") this.#need = Math.min(needs.length - 1, this.#need + 1);
    else if (key.name === "up" || char === "k") this.#need = Math.max(0, this.#need - 1);
    else if (key.name === "escape" || key.name === "backspace" || char === "h") this.#view = "room";
    else if (key.name === "enter" && need?.id) this.#thread = { id: need.id, scroll: 0 };
    else if (char === "r" && copy) this.#ask("reply", "", { replyTo: copy });
    else if (char !== "n") this.#onCommonKey(key);
  }

  #onClaimsKey(key: Key): void {
    const char = key.name === "char" ? key.char : null;
    if (key.name === "down" || char === "j") this.#claimsScroll++;
    else if (key.name === "up" || char === "k") this.#claimsScroll = Math.max(0, this.#claimsScroll - 1);
    else if (key.name === "escape" || key.name === "backspace" || char === "h") this.#view = "room";
    else if (char !== "l") this.#onCommonKey(key);
  }

  #onThreadKey(thread: { id: string; scroll: number }, key: Key): void {
    const char = key.name === "char" ? key.char : null;
    const page = Math.max(1, this.#screenRows() - 3);
    if (key.name === "down" || char === "j") thread.scroll++;
    else if (key.name === "up" || char === "k") thread.scroll = Math.max(0, thread.scroll - 1);
    else if (key.name === "pagedown" || char === " ") thread.scroll += page;
    else if (key.name === "pageup") thread.scroll = Math.max(0, thread.scroll - page);
    else if (key.name === "escape" || key.name === "backspace" || char === "h") this.#thread = null;
    else if (char === "q") this.#quit();
    else if (char === "r") {
      const messages = this.#room.thread(thread.id) ?? [];
      const opened = this.#room.anyCopy(thread.id);
      const last = messages[messages.length - 1];
      const target = (last && this.#room.anyCopy(last.id)) ?? opened;
      if (target) this.#ask("reply", "", { replyTo: target });
    }
  }

  #ask(kind: PromptKind, value: string, draft: Prompt["draft"]): void {
    if (kind === "to" || kind === "reply") {
      try {
        requireHuman(this.#options.human);
      } catch (error) {
        this.#status = { text: inRoomTerms(error), error: true };
        return;
      }
    }
    this.#prompt = { kind, value, draft };
    this.#status = null;
  }

  #onPromptKey(prompt: Prompt, key: Key): void {
    if (key.name === "escape") {
      this.#prompt = null;
      this.#status = null;
      return;
    }
    if (key.name === "char") prompt.value += key.char;
    else if (key.name === "newline" && (prompt.kind === "body" || prompt.kind === "reply")) prompt.value += "\n";
    else if (key.name === "backspace") prompt.value = [...prompt.value].slice(0, -1).join("");
    else if (key.name === "ctrl-u") prompt.value = "";
    else if (key.name === "enter") this.#submit(prompt);
  }

  #submit(prompt: Prompt): void {
    const value = prompt.value;
    switch (prompt.kind) {
      case "agent":
        this.#prompt = null;
        this.#filter = { ...this.#filter, agent: value.trim() === "" ? undefined : value.trim() };
        return;
      case "search":
        this.#prompt = null;
        this.#filter = { ...this.#filter, text: value === "" ? undefined : value };
        return;
      case "to":
        if (value.trim() !== "") void this.#checkTo(prompt, value.trim());
        return;
      case "subject":
        this.#prompt = { kind: "body", value: "", draft: { ...prompt.draft, subject: value.trim() === "" ? undefined : value } };
        return;
      case "body":
      case "reply":
        this.#prompt = null;
        void this.#send(prompt, value);
    }
  }

  /**
   * Checks a compose's To as its send will resolve it, before the rest is typed: refused, the To stays to be
   * corrected, with the whole reason; else the subject is asked. Keys typed meanwhile wait (#held).
   */
  async #checkTo(prompt: Prompt, to: string): Promise<void> {
    this.#held = [];
    this.#say("checking…");
    try {
      const checked = await checkAsHuman(this.#options.invocation, this.#options.human!, to);
      this.#prompt = { kind: "subject", value: "", draft: { to } };
      const warnings = checked.warnings.length > 0 ? ` (${checked.warnings.join("; ")})` : "";
      this.#status = { text: `to ${checked.to.join(", ")}${warnings}`, error: false };
    } catch (error) {
      this.#prompt = prompt;
      this.#status = { text: `cannot send to ${to}: ${inRoomTerms(error)}`, error: true };
    }
    const held = this.#held;
    this.#held = null;
    for (const key of held) this.#onKey(key);
    this.#draw();
  }

  /** Sends; a send that fails puts the message back in its prompt, to be sent again or changed. */
  async #send(prompt: Prompt, body: string): Promise<void> {
    const { draft } = prompt;
    const human = this.#options.human!;
    const invocation = this.#options.invocation;
    this.#say("sending…");
    try {
      if (draft.replyTo) {
        const original = draft.replyTo;
        const found = await this.#room.find(original.mailbox, original.id);
        if (!found) throw new AgentmailError("not_found", `message ${original.id} is no longer in ${original.mailbox}'s mailbox`);
        const sent = await replyAsHuman(invocation, human, found, body);
        this.#say(`replied ${sent.id} to ${replyAddressee(found, human)}`);
      } else {
        const warnings: string[] = [];
        const sent = await sendAsHuman(invocation, human, draft.to!, body, { subject: draft.subject }, (warning) => warnings.push(warning));
        this.#say(`sent ${sent.id} to ${draft.to}${warnings.length > 0 ? ` (${warnings.join("; ")})` : ""}`);
      }
    } catch (error) {
      if (this.#prompt === null) this.#prompt = { ...prompt, value: body };
      this.#say(`not sent (your message is kept: Enter sends it again, Esc drops it): ${inRoomTerms(error)}`, true);
    }
  }

  #screenRows(): number {
    return this.#screen?.size().rows ?? 24;
  }

  /**
   * How the room's screen is shared out: the header, what needs the person (when anything does), the agents (a
   * third at most, scrolling), the mail's rule and rows, and the bottom (an error, wrapped, and the key line).
   */
  #layout(rows: number, bottom = 1): { needs: number; agents: number; feed: number } {
    const needs = this.#room.needs().length;
    const needRows = needs === 0 ? 0 : 1 + Math.min(needs, rows >= 36 ? 5 : 2);
    const left = rows - 1 - needRows - 1 - bottom;
    const agents = Math.min(this.#agents().length + 1, Math.max(3, Math.floor(left / 3)));
    return { needs: needRows, agents, feed: Math.max(1, left - agents) };
  }

  #selectedIndex(): number {
    if (this.#selected === null) return 0;
    const { mailbox, id } = this.#selected;
    const index = this.#visible.findIndex((item) => item.mailbox === mailbox && item.id === id);
    return index === -1 ? 0 : index;
  }

  /** The whole screen as lines (also what tests read through capture-pane). */
  lines(columns: number, rows: number): Line[] {
    const now = new Date();
    const room = this.#room;
    const header = headerLine(
      { store: this.#options.store, human: this.#options.human, copies: room.size },
      { agents: room.agents().length, needs: room.needs().length, mailman: room.mailman() },
    );
    const bottom = this.#bottomLines(columns);
    const body = rows - 1 - bottom.length;
    const fill = (lines: Line[]) => {
      const shown = lines.slice(0, body);
      while (shown.length < body) shown.push({ segments: [] });
      return [header, ...shown, ...bottom];
    };
    if (this.#thread) {
      const text = threadLines(room.thread(this.#thread.id) ?? [], columns, now);
      this.#thread.scroll = Math.max(0, Math.min(this.#thread.scroll, text.length - body));
      return fill(text.slice(this.#thread.scroll));
    }
    if (this.#view === "needs") {
      const needs = room.needs();
      const lines = [sectionLine(`needs you (${needs.length}) · enter opens · r replies`, columns)];
      if (needs.length === 0) lines.push({ segments: [{ text: "  Nothing needs you now.", style: "dim" }] });
      this.#need = Math.max(0, Math.min(this.#need, needs.length - 1));
      const first = Math.max(0, this.#need - (body - 2));
      needs.slice(first).forEach((need, i) => {
        lines.push(needLine(need, first + i === this.#need, columns, now));
      });
      return fill(lines);
    }
    if (this.#view === "claims") {
      const claims = room.claims();
      const lines = [mailmanLine(room.mailman(), now), sectionLine(`claims (${claims.length})`, columns)];
      if (claims.length === 0) lines.push({ segments: [{ text: "  No claims.", style: "dim" }] });
      for (const claim of claims) lines.push(claimLine(claim, now));
      this.#claimsScroll = Math.max(0, Math.min(this.#claimsScroll, lines.length - body));
      return fill(lines.slice(this.#claimsScroll));
    }
    const layout = this.#layout(rows, bottom.length);
    const lines: Line[] = [];
    if (layout.needs > 0) {
      const needs = room.needs();
      lines.push(sectionLine(`needs you (${needs.length}) · n shows all`, columns));
      for (const need of needs.slice(0, layout.needs - 1)) lines.push(needLine(need, false, columns, now));
    }
    const agents = this.#agents();
    const selected = this.#focus === "agents" ? this.#agentIndex(agents) : null;
    const shownAgents = layout.agents - 1;
    if (selected !== null) {
      if (selected < this.#agentFirst) this.#agentFirst = selected;
      if (selected >= this.#agentFirst + shownAgents) this.#agentFirst = selected - shownAgents + 1;
    }
    this.#agentFirst = Math.max(0, Math.min(this.#agentFirst, agents.length - shownAgents));
    lines.push(...agentLines(agents, layout.agents, now, { first: this.#agentFirst, selected, focused: this.#focus === "agents" }));
    // Enough to scroll a page past the selection; the rest stays in the room.
    this.#visible = room.latest(this.#selectedIndex() + layout.feed * 2 + 1, this.#filter);
    const index = this.#selectedIndex();
    const filtered = this.#filter.agent !== undefined || Boolean(this.#filter.text);
    lines.push(ruleLine(this.#filter, filtered ? room.count(this.#filter) : room.size, room.size, columns, this.#focus === "mail"));
    const first = Math.max(0, index - layout.feed + 1);
    for (let row = 0; row < layout.feed; row++) {
      const item = this.#visible[first + row];
      lines.push(item ? feedLine(item, first + row === index && this.#focus === "mail", columns, now) : { segments: [] });
    }
    return fill(lines);
  }

  /** The key line, or the prompt; above it an error, whole, wrapped to the width. */
  #bottomLines(columns: number): Line[] {
    const lines: Line[] = [];
    const status = this.#status;
    if (status?.error) for (const text of wrapWords(status.text, columns).slice(0, ERROR_LINES)) lines.push(keyLine(text, "red"));
    if (this.#prompt) {
      // What the last step said (a To checked: whom it reaches) stays above the next prompt.
      if (status && !status.error)
        for (const text of wrapWords(status.text, columns).slice(0, ERROR_LINES)) lines.push(keyLine(text, "dim"));
      const value = this.#prompt.value.replaceAll("\n", "⏎");
      lines.push(keyLine(`${LABELS[this.#prompt.kind]}${value}▏`, "plain"));
    } else if (status && !status.error) lines.push(keyLine(status.text, "plain"));
    else
      lines.push(
        keyLine(this.#thread ? THREAD_KEYS : this.#view === "needs" ? NEEDS_KEYS : this.#view === "claims" ? CLAIMS_KEYS : ROOM_KEYS),
      );
    return lines;
  }

  #draw(): void {
    if (!this.#screen || this.#done) return;
    const { columns, rows } = this.#screen.size();
    this.#screen.draw(this.lines(columns, rows));
  }
}
