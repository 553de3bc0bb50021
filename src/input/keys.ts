/**
 * Keys typed at a full-screen view: stdin in raw mode, its bytes decoded into key names (`up`, `enter`, `ctrl-c`,
 * ...) or the characters typed. A paste arrives as characters; control bytes other than the named keys are dropped.
 */

export type Key =
  | { name: "up" | "down" | "left" | "right" | "pageup" | "pagedown" | "home" | "end" }
  | { name: "enter" | "newline" | "escape" | "backspace" | "tab" | "ctrl-c" | "ctrl-u" }
  | { name: "char"; char: string };

const SEQUENCES: Record<string, Key["name"]> = {
  "[A": "up",
  "[B": "down",
  "[C": "right",
  "[D": "left",
  OA: "up",
  OB: "down",
  OC: "right",
  OD: "left",
  "[5~": "pageup",
  "[6~": "pagedown",
  "[H": "home",
  "[F": "end",
  OH: "home",
  OF: "end",
  "[1~": "home",
  "[4~": "end",
  "[7~": "home",
  "[8~": "end",
};

const CONTROLS: Record<string, Key["name"]> = {
  "\r": "enter",
  "\n": "newline",
  "\t": "tab",
  "\u007f": "backspace",
  "\b": "backspace",
  "\u0003": "ctrl-c",
  "\u0015": "ctrl-u",
};

/** The keys in one read from the terminal. An escape sequence the view does not use is dropped whole. */
export function decodeKeys(text: string): Key[] {
  const keys: Key[] = [];
  let i = 0;
  while (i < text.length) {
    const char = text[i]!;
    if (char === "\u001b") {
      const next = text[i + 1];
      if (next === "[" || next === "O") {
        // CSI/SS3: parameters and intermediates, then one final byte in @..~.
        let end = i + 2;
        while (end < text.length && !(text.charCodeAt(end) >= 0x40 && text.charCodeAt(end) <= 0x7e)) end++;
        const body = text.slice(i + 1, end + 1);
        const name = SEQUENCES[body];
        if (name) keys.push({ name } as Key);
        i = end + 1;
        continue;
      }
      keys.push({ name: "escape" });
      i++;
      continue;
    }
    const control = CONTROLS[char];
    if (control) keys.push({ name: control } as Key);
    else {
      const code = text.codePointAt(i)!;
      const whole = String.fromCodePoint(code);
      if (code >= 0x20 && !(code >= 0x7f && code <= 0x9f)) keys.push({ name: "char", char: whole });
      i += whole.length;
      continue;
    }
    i++;
  }
  return keys;
}

export interface KeyInput {
  close(): void;
}

/** What readKeys needs of stdin (process.stdin on a terminal). */
interface KeyStream {
  setRawMode?(raw: boolean): unknown;
  setEncoding(encoding: "utf8"): unknown;
  on(event: "data", listener: (chunk: string) => void): unknown;
  off(event: "data", listener: (chunk: string) => void): unknown;
  resume(): unknown;
  pause(): unknown;
}

/** Puts the terminal on stdin in raw mode and calls `onKey` for each key until closed (which restores it). */
export function readKeys(onKey: (key: Key) => void, stdin: KeyStream = process.stdin): KeyInput {
  stdin.setRawMode?.(true);
  stdin.setEncoding("utf8");
  const listener = (chunk: string) => {
    for (const key of decodeKeys(chunk)) onKey(key);
  };
  stdin.on("data", listener);
  stdin.resume();
  return {
    close() {
      stdin.off("data", listener);
      stdin.setRawMode?.(false);
      stdin.pause();
    },
  };
}
