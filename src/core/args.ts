import { usageError } from "./errors.ts";
import { displayName } from "./names.ts";

/** The subset of citty's argument definitions agentmail uses, plus `optionalValue` for `--wait [SECONDS]`. */
export interface ArgDef {
  type: "positional" | "string" | "boolean" | "enum";
  description?: string;
  alias?: string | string[];
  valueHint?: string;
  options?: string[];
  /** A string flag whose value may be left out: `--wait`, `--wait 30`, `--wait=30`. */
  optionalValue?: boolean;
  /**
   * A string flag that may be given more than once (`-r a -r b`): its value is the list of every one given. On the
   * last positional: it takes every argument left (`MEMBER...`), as a list.
   */
  multiple?: boolean;
}

export type ArgsDef = Record<string, ArgDef>;

export interface ParsedArgs {
  [name: string]: string | string[] | boolean | undefined;
}

export interface ParseResult {
  help: boolean;
  args: ParsedArgs;
}

/** Flags every command takes; the dispatcher acts on them. */
export const COMMON_ARGS: ArgsDef = {
  json: { type: "boolean", description: "Print exactly one JSON document on stdout" },
  help: { type: "boolean", alias: "h", description: "Show this help" },
};

function aliases(def: ArgDef): string[] {
  return def.alias === undefined ? [] : Array.isArray(def.alias) ? def.alias : [def.alias];
}

const NUMBER = /^\d+(\.\d+)?$/;

/** `--wait 30` becomes `--wait=30` and a bare `--wait` becomes `--wait=`, so the strict parser sees one shape. */
function normalizeOptionalValues(argv: readonly string[], defs: ArgsDef): string[] {
  const optional = new Set<string>();
  for (const [name, def] of Object.entries(defs)) {
    if (!def.optionalValue) continue;
    optional.add(`--${name}`);
    for (const alias of aliases(def)) optional.add(alias.length === 1 ? `-${alias}` : `--${alias}`);
  }
  const out: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const token = argv[i]!;
    if (token === "--") {
      out.push(...argv.slice(i));
      break;
    }
    if (optional.has(token)) {
      const next = argv[i + 1];
      const name = token.startsWith("--") ? token : `--${Object.entries(defs).find(([, d]) => aliases(d).includes(token.slice(1)))![0]}`;
      if (next !== undefined && NUMBER.test(next)) {
        out.push(`${name}=${next}`);
        i++;
      } else out.push(`${name}=`);
      continue;
    }
    out.push(token);
  }
  return out;
}

function isHelpToken(token: string): boolean {
  return token === "--help" || token === "-h";
}

/**
 * Strict parsing against a command's definitions: unknown flags, a flag given a value it does not take, a flag
 * missing its value and surplus positionals are usage errors (citty on its own accepts them silently).
 * A flag placed after a positional is still a flag; everything after `--` is positional.
 */
export function parseCommandArgs(argv: readonly string[], defs: ArgsDef, commandName: string): ParseResult {
  const all: ArgsDef = { ...defs, ...COMMON_ARGS };
  const options: Record<string, { type: "string" | "boolean"; short?: string }> = {};
  const longNames = new Map<string, string>();
  for (const [name, def] of Object.entries(all)) {
    if (def.type === "positional") continue;
    const type = def.type === "boolean" ? "boolean" : "string";
    options[name] = { type };
    longNames.set(name, name);
    for (const alias of aliases(def)) {
      if (alias.length === 1) options[name]!.short = alias;
      else longNames.set(alias, name);
    }
  }
  const helpHint = `run 'agentmail ${commandName} --help'`;
  const dashDash = argv.indexOf("--");
  if ((dashDash === -1 ? argv : argv.slice(0, dashDash)).some(isHelpToken)) return { help: true, args: {} };

  const shortNames = new Map(Object.entries(options).flatMap(([name, option]) => (option.short ? [[option.short, name] as const] : [])));
  const resolve = (rawName: string) => (rawName.startsWith("--") ? longNames.get(rawName.slice(2)) : shortNames.get(rawName.slice(1)));
  const tokens = tokenize(normalizeOptionalValues(argv, all), (rawName) => options[resolve(rawName) ?? ""]?.type === "string");
  const args: ParsedArgs = {};
  const positionals: string[] = [];
  for (const token of tokens) {
    if (token.kind === "positional") {
      positionals.push(token.value);
      continue;
    }
    const name = resolve(token.rawName);
    if (name === undefined) throw usageError(`unknown option '${displayName(token.rawName)}' for 'agentmail ${commandName}'; ${helpHint}`);
    const def = all[name]!;
    if (def.type === "boolean") {
      if (token.value !== undefined) throw usageError(`option '${displayName(token.rawName)}' takes no value; ${helpHint}`);
      args[name] = true;
      continue;
    }
    if (token.value === undefined) throw usageError(`option '${displayName(token.rawName)}' needs a value; ${helpHint}`);
    if (def.type === "enum" && def.options && !def.options.includes(token.value)) {
      throw usageError(`option '${displayName(token.rawName)}' must be one of ${def.options.join(", ")}; ${helpHint}`);
    }
    if (def.multiple) args[name] = [...((args[name] as string[] | undefined) ?? []), token.value];
    else args[name] = token.value;
  }
  const positionalNames = Object.entries(all).filter(([, def]) => def.type === "positional").map(([name]) => name);
  const rest = positionalNames[positionalNames.length - 1];
  if (rest !== undefined && all[rest]!.multiple) {
    // The last positional takes every argument left over: `group add NAME MEMBER...`.
    args[rest] = positionals.splice(positionalNames.length - 1);
    positionalNames.pop();
  }
  if (positionals.length > positionalNames.length) {
    const surplus = positionals[positionalNames.length]!;
    throw usageError(`unexpected argument '${displayName(surplus)}' for 'agentmail ${commandName}'; quote a message that has spaces, or ${helpHint}`);
  }
  positionals.forEach((value, index) => {
    const name = positionalNames[index]!;
    const def = all[name]!;
    if (def.options && !def.options.includes(value)) throw usageError(`'${displayName(value)}' is not one of ${def.options.join(", ")}; ${helpHint}`);
    args[name] = value;
  });
  return { help: false, args };
}

type Token = { kind: "positional"; value: string } | { kind: "option"; rawName: string; value: string | undefined };

/**
 * Splits argv into options and positionals (what node:util's parseArgs does, without loading node:util on every
 * start-up): `--name=value`, `--name value` and `-n value` for options that take a value (the next argument is
 * taken even when it starts with a dash), `-abc` as three flags, and everything after `--` as positionals.
 */
export function tokenize(argv: readonly string[], takesValue: (option: string) => boolean): Token[] {
  const tokens: Token[] = [];
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    if (arg === "--") {
      for (const rest of argv.slice(i + 1)) tokens.push({ kind: "positional", value: rest });
      break;
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
