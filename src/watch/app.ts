/**
 * `agentmail watch` on a terminal: the room live, redrawn whenever the store's feed brings a change, a key is typed
 * or the terminal is resized. Keys: ↑/↓ (k/j) move, PgUp/PgDn, Enter opens the thread, c composes, r replies, a
 * filters by agent, / searches, Esc goes back or clears the filter, q quits.
 */
import { AgentmailError } from "../mail/errors.ts";
import { decodeKeys, readKeys, type Key, type KeyInput } from "../input/keys.ts";
import { openScreen, type Line, type Screen } from "../output/screen.ts";
import type { Invocation } from "../identity/invocation.ts";
import { replyAsHuman, requireHuman, sendAsHuman } from "../actions/human.ts";
import type { MailItem } from "../room/model.ts";
import type { Room, RoomFilter } from "../room/room.ts";
import { agentLines, feedLine, headerLine, keyLine, ruleLine, threadLines } from "./view.ts";

/** How long the view waits for a change before it looks anyway (a read on Redis rings nothing). */
const LOOK_MS = 1_000;

type PromptKind = "to" | "subject" | "body" | "reply" | "agent" | "search";

interface Prompt {
  kind: PromptKind;
  value: string;
  /** What the earlier prompts of a compose collected. */
  draft: { to?: string; subject?: string; replyTo?: MailItem };
}

const LABELS: Record<PromptKind, string> = {
  to: "To (name, a,b, @all, @GROUP, role:ROLE): ",
  subject: "Subject (Enter for none): ",
  body: "Message (Ctrl-J new line, Enter sends): ",
  reply: "Reply: ",
  agent: "Show mail of agent (Enter for all): ",
  search: "Search: ",
};

const FEED_KEYS = "↑↓ move  enter thread  c compose  r reply  a agent  / search  esc clear  q quit";
const THREAD_KEYS = "↑↓ scroll  r reply  esc back  q quit";

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
  #filter: RoomFilter = {};
  /** The selected copy, by mailbox and id, so it stays selected as mail arrives above it. */
  #selected: { mailbox: string; id: string } | null = null;
  #thread: { id: string; scroll: number } | null = null;
  #prompt: Prompt | null = null;
  #status: { text: string; error: boolean } | null = null;
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

  #onKey(key: Key): void {
    if (key.name === "ctrl-c") {
      this.#quit();
      return;
    }
    if (this.#prompt) this.#onPromptKey(this.#prompt, key);
    else if (this.#thread) this.#onThreadKey(this.#thread, key);
    else this.#onFeedKey(key);
    this.#draw();
  }

  #onFeedKey(key: Key): void {
    const index = this.#selectedIndex();
    const move = (to: number) => {
      const item = this.#visible[Math.max(0, Math.min(this.#visible.length - 1, to))];
      if (item) this.#selected = { mailbox: item.mailbox, id: item.id };
    };
    const page = Math.max(1, this.#feedRows() - 1);
    const char = key.name === "char" ? key.char : null;
    if (key.name === "down" || char === "j") move(index + 1);
    else if (key.name === "up" || char === "k") move(index - 1);
    else if (key.name === "pagedown") move(index + page);
    else if (key.name === "pageup") move(index - page);
    else if (key.name === "home" || char === "g") move(0);
    else if (key.name === "end" || char === "G") move(this.#visible.length - 1);
    else if (key.name === "enter") {
      const item = this.#visible[index];
      if (item) this.#thread = { id: item.id, scroll: 0 };
    } else if (char === "q") this.#quit();
    else if (char === "c") this.#ask("to", "", {});
    else if (char === "r") {
      const item = this.#visible[index];
      if (item) this.#ask("reply", "", { replyTo: item });
    } else if (char === "a") this.#ask("agent", this.#filter.agent ?? "", {});
    else if (char === "/") this.#ask("search", this.#filter.text ?? "", {});
    else if (key.name === "escape") {
      this.#filter = {};
      this.#status = null;
    }
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
        this.#status = { text: (error as Error).message, error: true };
        return;
      }
    }
    this.#prompt = { kind, value, draft };
    this.#status = null;
  }

  #onPromptKey(prompt: Prompt, key: Key): void {
    if (key.name === "escape") {
      this.#prompt = null;
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
        if (value.trim() === "") return;
        this.#prompt = { kind: "subject", value: "", draft: { to: value.trim() } };
        return;
      case "subject":
        this.#prompt = { kind: "body", value: "", draft: { ...prompt.draft, subject: value.trim() === "" ? undefined : value } };
        return;
      case "body":
      case "reply":
        this.#prompt = null;
        void this.#send(prompt.draft, value);
    }
  }

  async #send(draft: Prompt["draft"], body: string): Promise<void> {
    const human = this.#options.human!;
    const invocation = this.#options.invocation;
    this.#say("sending…");
    try {
      if (draft.replyTo) {
        const original = draft.replyTo;
        const found = await this.#room.store.find(original.mailbox, original.id);
        if (!found) throw new AgentmailError("not_found", `message ${original.id} is no longer in ${original.mailbox}'s mailbox`);
        const sent = await replyAsHuman(invocation, human, { message: found.message, mailbox: original.mailbox }, body);
        this.#say(`replied ${sent.id} to ${sent.to}`);
      } else {
        const warnings: string[] = [];
        const sent = await sendAsHuman(invocation, human, draft.to!, body, { subject: draft.subject }, (warning) => warnings.push(warning));
        this.#say(`sent ${sent.id} to ${draft.to}${warnings.length > 0 ? ` (${warnings.join("; ")})` : ""}`);
      }
    } catch (error) {
      this.#say(`not sent: ${(error as Error).message}`, true);
    }
  }

  #screenRows(): number {
    return this.#screen?.size().rows ?? 24;
  }

  /** Rows the agents get (their heading included): a third of the screen at most. */
  #agentRows(rows: number): number {
    return Math.min(this.#room.agents().length + 1, Math.max(2, Math.floor((rows - 3) / 3)));
  }

  /** Rows the feed gets: the screen less the header, the agents, the rule and the key line. */
  #feedRows(rows = this.#screenRows()): number {
    return Math.max(1, rows - 3 - this.#agentRows(rows));
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
    const agents = this.#room.agents();
    const lines: Line[] = [headerLine({ store: this.#options.store, human: this.#options.human, copies: this.#room.size }, agents.length)];
    const bottom = this.#bottomLine();
    if (this.#thread) {
      const messages = this.#room.thread(this.#thread.id) ?? [];
      const body = threadLines(messages, columns, now);
      const room = rows - 2;
      this.#thread.scroll = Math.max(0, Math.min(this.#thread.scroll, body.length - room));
      lines.push(...body.slice(this.#thread.scroll, this.#thread.scroll + room));
      while (lines.length < rows - 1) lines.push({ segments: [] });
      lines.push(bottom);
      return lines;
    }
    lines.push(...agentLines(agents, this.#agentRows(rows), now));
    const feedRows = this.#feedRows(rows);
    // Enough to scroll a page past the selection; the rest stays in the room.
    this.#visible = this.#room.latest(this.#selectedIndex() + feedRows * 2 + 1, this.#filter);
    const selected = this.#selectedIndex();
    lines.push(ruleLine(this.#filter, this.#visible.length, columns));
    const first = Math.max(0, selected - feedRows + 1);
    for (let row = 0; row < feedRows; row++) {
      const item = this.#visible[first + row];
      lines.push(item ? feedLine(item, first + row === selected, columns, now) : { segments: [] });
    }
    lines.push(bottom);
    return lines;
  }

  #bottomLine(): Line {
    if (this.#prompt) return keyLine(`${LABELS[this.#prompt.kind]}${this.#prompt.value.replaceAll("\n", "⏎")}▏`, "plain");
    if (this.#status) return keyLine(this.#status.text, this.#status.error ? "red" : "plain");
    return keyLine(this.#thread ? THREAD_KEYS : FEED_KEYS);
  }

  #draw(): void {
    if (!this.#screen || this.#done) return;
    const { columns, rows } = this.#screen.size();
    this.#screen.draw(this.lines(columns, rows));
  }
}
