import { parseArgs } from "node:util";
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
}

export type ArgsDef = Record<string, ArgDef>;

export interface ParsedArgs {
  [name: string]: string | boolean | undefined;
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

  const { tokens } = parseArgs({ args: normalizeOptionalValues(argv, all), options, strict: false, allowPositionals: true, tokens: true });
  const args: ParsedArgs = {};
  const positionals: string[] = [];
  for (const token of tokens) {
    if (token.kind === "positional") {
      positionals.push(token.value);
      continue;
    }
    if (token.kind !== "option") continue;
    const name = longNames.get(token.name) ?? (token.rawName.length === 2 ? Object.keys(options).find((n) => options[n]!.short === token.name) : undefined);
    if (name === undefined || options[name] === undefined) throw usageError(`unknown option '${displayName(token.rawName)}' for 'agentmail ${commandName}'; ${helpHint}`);
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
    args[name] = token.value;
  }
  const positionalNames = Object.entries(all).filter(([, def]) => def.type === "positional").map(([name]) => name);
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
