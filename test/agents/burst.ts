/**
 * A burst of mail to a real agent CLI and what of it reached the model, read from the mock's request log and the
 * sender's `sent --json`: shared by the burst tests (test/agents/*-delivery.test.ts) and bench/channels.ts.
 */
import type { Recorded } from "../support/mock-model/server.ts";
import type { Interactive } from "./interactive.ts";
import { SENDER } from "./interactive.ts";

/** The body of burst message `i`: about 200 characters, its marker at the very end (a cut or a list line drops it). */
export const burstBody = (i: number) => `Burst message ${i}: ${"details of the change ".repeat(8)}(burst-${i}).`;

/** Sends `count` burst messages one after another, as fast as sends go; returns their ids. */
export async function sendBurst(lab: Interactive, to: string, count = 50): Promise<string[]> {
  const ids: string[] = [];
  for (let i = 0; i < count; i++) ids.push(await lab.world.send(SENDER, to, burstBody(i)));
  return ids;
}

/** The text blocks of a request (Anthropic messages or OpenAI input items: their text), each as a string. */
export function textsOf(body: { messages?: { content: unknown }[]; input?: unknown[] }): string[] {
  const texts: string[] = [];
  const visit = (value: unknown) => {
    if (typeof value === "string") texts.push(value);
    else if (Array.isArray(value)) for (const each of value) visit(each);
    else if (value && typeof value === "object") {
      const block = value as { text?: unknown; content?: unknown; output?: unknown };
      if (typeof block.text === "string") texts.push(block.text);
      if (block.content !== undefined) visit(block.content);
      if (typeof block.output === "string") texts.push(block.output);
    }
  };
  for (const message of body?.messages ?? []) visit(message.content);
  for (const item of body?.input ?? []) visit(item);
  return texts;
}

/**
 * agentmail's own text in a text block: from its opening ("You got new mail", a frame's "agentmail: …") to the end of
 * its last message, list line or closing line; the agent CLI's wrapper and whatever it adds to the block left out.
 */
export function agentmailPart(text: string): string {
  const starts = [text.indexOf("You got new mail"), text.indexOf("agentmail: ")].filter((at) => at >= 0);
  if (starts.length === 0) return "";
  const start = Math.min(...starts);
  let end = start;
  for (const pattern of [
    /\(burst-\d+\)\.\n?/g,
    /\n- (\S{8} from |and \d+ more \(agentmail inbox)[^\n]*/g,
    /\(\d+ more unread[^\n]*\n?/g,
    /Answer with: agentmail reply <id> "<text>"\./g,
  ])
    for (const match of text.slice(start).matchAll(pattern)) end = Math.max(end, start + match.index + match[0].length);
  return text.slice(start, end);
}

export interface BurstFigures {
  /** Conversation requests made since the burst began (the title requests of Codex left out). */
  requests: number;
  /** agentmail's own text that reached the model (each distinct text block carrying mail, once). */
  mailChars: number;
  /** The text blocks that carried it, with what the agent CLI put around it in the same block. */
  blockChars: number;
  /** The characters of all those requests (the context each one re-sends). */
  requestChars: number;
  /** Burst messages whose whole body reached the model (its end marker is in a request), by number. */
  wholeInRequests: number[];
  /** Burst messages listed by a line of their own in a request (`- <id> from …`). */
  listedInRequests: number;
  /** How the sender's record says each arrived: shown whole, cut, listed or counted, or never announced. */
  shown: Record<"whole" | "cut" | "listed" | "counted" | "none", number>;
  read: number;
}

interface SentCopy {
  id: string;
  message: string;
  read_flag: boolean;
  delivery?: { state: string; shown?: string };
}

/** What of the burst (`ids`, sent after `since`) reached the model, once the agent has gone quiet. */
export async function burstFigures(
  lab: Interactive,
  since: number,
  ids: readonly string[],
  skip: (request: Recorded) => boolean = () => false,
): Promise<BurstFigures> {
  const requests = lab.world.mock.conversation.filter(
    (request) => request.at > since && !skip(request) && textsOf(request.body).length > 0,
  );
  const mailTexts = new Set<string>();
  for (const request of requests)
    for (const text of textsOf(request.body)) if (/burst-\d+|Burst message \d+/.test(text)) mailTexts.add(text);
  const all = requests.map((request) => JSON.stringify(request.body)).join("\n");
  const wholeInRequests: number[] = [];
  for (let i = 0; i < ids.length; i++) if (all.includes(`(burst-${i}).`)) wholeInRequests.push(i);
  const sent = (JSON.parse((await lab.world.agentmail(["sent", "--json"], SENDER)).stdout) as SentCopy[]).filter((copy) =>
    ids.includes(copy.id),
  );
  const shown = { whole: 0, cut: 0, listed: 0, counted: 0, none: 0 };
  for (const copy of sent) {
    const kind = copy.delivery?.shown as keyof typeof shown | undefined;
    shown[kind && kind in shown ? kind : "none"]++;
  }
  return {
    requests: requests.length,
    mailChars: [...mailTexts].reduce((sum, text) => sum + agentmailPart(text).length, 0),
    blockChars: [...mailTexts].reduce((sum, text) => sum + text.length, 0),
    requestChars: requests.reduce((sum, request) => sum + JSON.stringify(request.body).length, 0),
    wholeInRequests,
    listedInRequests: ids.filter((id) => all.includes(`- ${id} from `)).length,
    shown,
    read: sent.filter((copy) => copy.read_flag).length,
  };
}

/** One line of figures, as the bench prints them. */
export function describeBurst(label: string, figures: BurstFigures): string {
  const { shown } = figures;
  return (
    `${label}: ${figures.requests} model requests, ${figures.mailChars} characters of agentmail's text reached the model ` +
    `(${figures.blockChars} in the text blocks carrying it), ${figures.requestChars} characters sent in those requests; ` +
    `${figures.wholeInRequests.length} bodies whole in the requests, ${figures.listedInRequests} listed by a line; ` +
    `record: ${shown.whole} whole, ${shown.cut} cut, ${shown.listed} listed, ${shown.counted} counted, ${shown.none} never announced; ${figures.read} read`
  );
}
