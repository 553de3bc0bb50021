/**
 * What a command prints, and the one place --json is acted on. A command's run returns an Output (or prints one
 * before it goes on, through its context's print); printOutput prints its one JSON document when --json was given,
 * else its text and what follows on stderr. A command never reads --json itself; src/output/streams.ts writes.
 */
import { printJson, printJsonArray, writeStdout } from "../output/streams.ts";

/**
 * What a command prints on stdout, said once: the layer prints `json` as the one JSON document when --json was given,
 * else `text()`. A command never reads --json itself.
 */
export interface Output {
  /**
   * The document --json prints (made only then); undefined prints none (a text-only print before the end); a
   * JsonArrayStream, an array printed as its items come.
   */
  json(): unknown;
  /** What stdout gets without --json (made only then): all of it, or pieces written as they come. */
  text(): string | Promise<string> | AsyncIterable<string>;
  /** Without --json, what is said on stderr after the text (with --json, the document holds it). */
  afterText?(): void | Promise<void>;
  /** What is said on stderr after the output, with or without --json (warnings that do not stop the command). */
  after?(): void | Promise<void>;
  /** The exit code, when not 0. */
  exitCode?: number;
}

/**
 * A JSON array that --json prints a batch of items at a time, as the batches come: a list too long to hold (`sent`
 * of a million messages). The document is the one JSON.stringify would make of the whole array.
 */
export class JsonArrayStream {
  constructor(readonly batches: AsyncIterable<readonly unknown[]>) {}
}

/** An Output whose document is `json`, and whose text is `text`, or what `text` makes when it is needed. */
export const output = (
  json: unknown,
  text: string | (() => string | Promise<string>),
  more: Omit<Output, "json" | "text"> = {},
): Output => ({
  json: () => json,
  text: typeof text === "string" ? () => text : text,
  ...more,
});

/** The one place --json is acted on: the document, or the text and what follows it on stderr. */
export async function printOutput(printed: Output, json: boolean): Promise<void> {
  if (json) {
    // An interim print (text only, before a command goes on) has no document: the one document comes at the end.
    const document = await printed.json();
    if (document instanceof JsonArrayStream) await printJsonArray(document.batches);
    else if (document !== undefined) printJson(document);
  } else {
    const text = await printed.text();
    if (typeof text === "string") {
      if (text !== "") writeStdout(text);
    } else for await (const piece of text) if (piece !== "") writeStdout(piece);
    await printed.afterText?.();
  }
  await printed.after?.();
}
