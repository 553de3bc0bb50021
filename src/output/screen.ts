/**
 * A full-screen terminal view drawn by agentmail itself: the alternate screen, lines of styled segments fitted to
 * the width, a redraw on every change and on resize. Every segment's text goes through terminalLine first, so no
 * text shown here (message bodies, names: hostile input) can move the cursor, change a colour or set the title:
 * the only control sequences written are the ones this file makes. Colour only on a terminal without NO_COLOR.
 */
import { terminalLine } from "../mail/terminal-text.ts";
import { writeStdout } from "./streams.ts";

export type Style = "plain" | "bold" | "dim" | "reverse" | "red" | "yellow" | "green" | "cyan";

export interface Segment {
  text: string;
  style?: Style;
  /** Exactly this many columns: cut, or padded with spaces (at the end; at the start when `right`). */
  width?: number;
  right?: boolean;
}

/** One screen line; `style` applies to the whole line (the selected row), under each segment's own. */
export interface Line {
  segments: Segment[];
  style?: Style;
}

const SGR: Record<Style, string> = {
  plain: "",
  bold: "\u001b[1m",
  dim: "\u001b[2m",
  reverse: "\u001b[7m",
  red: "\u001b[31m",
  yellow: "\u001b[33m",
  green: "\u001b[32m",
  cyan: "\u001b[36m",
};
const RESET = "\u001b[0m";

/** Wide (two-column) code points: East Asian wide and fullwidth forms, and emoji presentation. */
const WIDE =
  /[\u1100-\u115f\u2e80-\u303e\u3041-\u33ff\u3400-\u4dbf\u4e00-\u9fff\ua000-\ua4cf\uac00-\ud7a3\uf900-\ufaff\ufe30-\ufe4f\uff00-\uff60\uffe0-\uffe6]|[\u{1f300}-\u{1f64f}\u{1f900}-\u{1f9ff}\u{20000}-\u{3fffd}]/u;
/** Zero-width: combining marks (variation selectors among them), joiners and other format characters. */
const ZERO = /[\p{M}\u200b-\u200f\u2028-\u202e\u2060-\u2064\ufeff]/u;

/** Columns a character takes on a terminal. */
function columnsOf(char: string): number {
  if (ZERO.test(char)) return 0;
  return WIDE.test(char) ? 2 : 1;
}

/** The text cut to at most `width` columns (the last one `…` when anything was cut), and the columns it takes. */
export function fit(text: string, width: number): { text: string; columns: number } {
  // A character takes at least no column and at most two: more than this many can never fit.
  const looked = text.length > width * 4 + 4 ? text.slice(0, width * 4 + 4) : text;
  const chars = [...looked];
  let total = 0;
  for (const char of chars) total += columnsOf(char);
  if (total <= width && looked === text) return { text, columns: total };
  if (width <= 0) return { text: "", columns: 0 };
  let out = "";
  let columns = 0;
  for (const char of chars) {
    const wide = columnsOf(char);
    if (columns + wide > width - 1) break;
    out += char;
    columns += wide;
  }
  return { text: `${out}…`, columns: columns + 1 };
}

/** The longest start of `text` that fits in `width` columns (at least one character), and the rest: for wrapping. */
export function takeColumns(text: string, width: number): [string, string] {
  let columns = 0;
  let end = 0;
  for (const char of text) {
    const wide = columnsOf(char);
    if (columns + wide > width && end > 0) break;
    columns += wide;
    end += char.length;
  }
  return [text.slice(0, end), text.slice(end)];
}

/** A line as plain text fitted to `width` columns: the segments safe, cut and padded. */
function layout(line: Line, width: number): { text: string; style?: Style; columns: number }[] {
  const parts: { text: string; style?: Style; columns: number }[] = [];
  let used = 0;
  for (const segment of line.segments) {
    if (used >= width) break;
    const room = Math.min(segment.width ?? width - used, width - used);
    const fitted = fit(terminalLine(segment.text), room);
    const pad = segment.width === undefined ? 0 : room - fitted.columns;
    const text = segment.right ? " ".repeat(pad) + fitted.text : fitted.text + " ".repeat(pad);
    parts.push({ text, style: segment.style, columns: fitted.columns + pad });
    used += fitted.columns + pad;
  }
  if (line.style && used < width) parts.push({ text: " ".repeat(width - used), columns: width - used });
  return parts;
}

/** A line as the terminal gets it: styled only when `colour`; never wider than `width`. */
export function renderLine(line: Line, width: number, colour: boolean): string {
  let out = "";
  for (const part of layout(line, width)) {
    const styles = colour ? SGR[line.style ?? "plain"] + SGR[part.style ?? "plain"] : "";
    out += styles ? `${styles}${part.text}${RESET}` : part.text;
  }
  return out;
}

/** Lines as plain text (no colour), each fitted to `width` and without trailing spaces: `watch --once`. */
export function plainLines(lines: Line[], width: number): string {
  return lines.map((line) => renderLine(line, width, false).trimEnd() + "\n").join("");
}

export interface ScreenSize {
  columns: number;
  rows: number;
}

interface TerminalStream {
  columns?: number;
  rows?: number;
  on(event: "resize", listener: () => void): unknown;
  off(event: "resize", listener: () => void): unknown;
}

export interface Screen {
  readonly colour: boolean;
  size(): ScreenSize;
  draw(lines: Line[]): void;
  close(): void;
}

/** Enters the alternate screen (cursor hidden) on stdout; `onResize` is called after the terminal changed size. */
export function openScreen(onResize: () => void, stream: TerminalStream = process.stdout, env = process.env): Screen {
  const colour = !env.NO_COLOR;
  stream.on("resize", onResize);
  writeStdout("\u001b[?1049h\u001b[?25l\u001b[H\u001b[2J");
  let open = true;
  return {
    colour,
    size: () => ({ columns: Math.max(20, stream.columns ?? 80), rows: Math.max(5, stream.rows ?? 24) }),
    draw(lines) {
      const { columns, rows } = this.size();
      let frame = "\u001b[H";
      for (let row = 0; row < rows; row++) {
        const line = lines[row];
        frame += (line ? renderLine(line, columns, colour) : "") + "\u001b[K";
        if (row < rows - 1) frame += "\r\n";
      }
      writeStdout(frame);
    },
    close() {
      if (!open) return;
      open = false;
      stream.off("resize", onResize);
      writeStdout("\u001b[0m\u001b[?25h\u001b[?1049l");
    },
  };
}
