/**
 * One word of argv: a positional, an option as typed (`-m`, `--message`) with the value it took, if any, or a word
 * that starts with a dash but reads as text (see readsAsText).
 */
export type Token =
  | { kind: "positional"; value: string }
  | { kind: "option"; rawName: string; value: string | undefined }
  | { kind: "dashed text"; value: string };

/**
 * A word that starts with a dash but is no option: a space in it (`-x is broken`, `- item` of a Markdown list; in an
 * option's name or in a cluster like `-hi there`), or no letter after the dash (`-5`, `->`). Split into options it
 * would read `-hi there` as a request for help and `-my fix` as `-m 'y fix'`; it is refused instead, with the `--`
 * that makes it text. A long option's value may hold spaces (`--message=hello world`); a short one's glued value
 * may not (`-m'a b'`: give it as `-m 'a b'`).
 */
function readsAsText(arg: string): boolean {
  const name = arg.startsWith("--") ? arg.slice(2).split("=", 1)[0]! : arg.slice(1);
  const first = name.charCodeAt(0);
  if (!((first >= 0x41 && first <= 0x5a) || (first >= 0x61 && first <= 0x7a))) return true;
  for (let i = 1; i < name.length; i++) if (isWhiteSpace(name.charCodeAt(i))) return true;
  return false;
}

/** What `\s` matches in a regular expression: JavaScript's white space and line terminators. */
function isWhiteSpace(code: number): boolean {
  if (code <= 0x20) return code === 0x20 || (code >= 0x09 && code <= 0x0d);
  return (
    code === 0xa0 ||
    code === 0x1680 ||
    (code >= 0x2000 && code <= 0x200a) ||
    code === 0x2028 ||
    code === 0x2029 ||
    code === 0x202f ||
    code === 0x205f ||
    code === 0x3000 ||
    code === 0xfeff
  );
}

/**
 * Splits argv into options and positionals as node:util's parseArgs does (which citty uses), without loading
 * node:util: measured, node:util and citty's runner cost send and receive 1.5–3 ms of start-up. `--name=value`,
 * `--name value` and `-n value` for options that take a value (the next word is taken even when it starts with a
 * dash), `-abc` as three switches, `-mvalue`, and everything after `--` as positionals; dashed text apart.
 */
export function tokenize(argv: readonly string[], takesValue: (rawName: string) => boolean): Token[] {
  const tokens: Token[] = [];
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    if (arg === "--") {
      for (const rest of argv.slice(i + 1)) tokens.push({ kind: "positional", value: rest });
      break;
    }
    if (arg.startsWith("-") && arg.length > 1 && readsAsText(arg)) {
      tokens.push({ kind: "dashed text", value: arg });
      continue;
    }
    if (arg.startsWith("--")) {
      const equals = arg.indexOf("=");
      if (equals !== -1) tokens.push({ kind: "option", rawName: arg.slice(0, equals), value: arg.slice(equals + 1) });
      else tokens.push({ kind: "option", rawName: arg, value: takesValue(arg) ? argv[++i] : undefined });
      continue;
    }
    if (arg.startsWith("-") && arg.length > 1) {
      for (let j = 1; j < arg.length; j++) {
        const rawName = `-${arg[j]}`;
        if (!takesValue(rawName)) {
          tokens.push({ kind: "option", rawName, value: undefined });
          continue;
        }
        tokens.push({ kind: "option", rawName, value: j + 1 < arg.length ? arg.slice(j + 1) : argv[++i] });
        break;
      }
      continue;
    }
    tokens.push({ kind: "positional", value: arg });
  }
  return tokens;
}
