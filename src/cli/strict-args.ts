/**
 * Parses one command's argv against its citty definition, strictly, into the arguments its run gets (args.ts types them).
 * citty's own parser (node:util's parseArgs, non-strict) lets unknown flags, a value given to a switch and a flag
 * missing its value pass silently, drops any word starting `--no-` even when it is a flag's value, and its runMain
 * takes -h anywhere, even as a value, for a request for help.
 */
import { usageError } from "../mail/errors.ts";
import { displayName } from "../mail/names.ts";
import { numberArg, type ArgSpec, type ArgSpecs } from "./args.ts";
import { aliasesOf, isRequired, positionalsOf, type Resolved } from "./definitions.ts";
import { notAnOption, notOneOf, surplusArgument, unknownCommand, unknownOption } from "./errors.ts";
import { usageLine } from "./help.ts";
import { tokenize, type Token } from "./tokenize.ts";

interface StrictArgs {
  help: boolean;
  json: boolean;
  /** Flags given, by their long name. */
  flags: Record<string, string | boolean | string[]>;
  /** What the run gets (args.ts's ParsedArgs): each argument under its name, read as declared; every positional in `_`. */
  args: Record<string, unknown>;
}

/** A number, negative ones included, so `--wait -5` is read as a (wrong) value rather than an unknown option. */
const NUMBER = /^-?(\d+\.?\d*|\.\d+)$/;

/** citty has no optional values: `--wait 30` and a bare `--wait` are rewritten to one inline shape first. */
function inlineOptionalValues(argv: readonly string[], optional: Set<string>): string[] {
  const out: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const token = argv[i]!;
    if (token === "--") {
      out.push(...argv.slice(i));
      break;
    }
    if (!optional.has(token)) {
      out.push(token);
      continue;
    }
    const next = argv[i + 1];
    const isValue = next !== undefined && next !== "--" && (!next.startsWith("-") || NUMBER.test(next));
    out.push(`${token}=${isValue ? next : ""}`);
    if (isValue) i++;
  }
  return out;
}

interface OptionTable {
  /** Long names and long aliases → the argument's name. */
  long: Map<string, string>;
  /** One-letter aliases → the argument's name. */
  short: Map<string, string>;
}

function optionTable(args: ArgSpecs): OptionTable {
  const table: OptionTable = { long: new Map(), short: new Map() };
  for (const [name, def] of Object.entries(args)) {
    if (def.type === "positional") continue;
    table.long.set(name, name);
    for (const alias of aliasesOf(def)) (alias.length === 1 ? table.short : table.long).set(alias, name);
  }
  return table;
}

/** Checks argv for `command` (reached as `commandLine`, e.g. "agentmail hooks install"); throws a usage error. */
export function strictArgs(argv: readonly string[], command: Resolved, commandLine: string): StrictArgs {
  const table = optionTable(command.args);
  const optional = new Set<string>();
  for (const [name, def] of Object.entries(command.args)) if (def.optionalValue) optional.add(`--${name}`);
  const argName = (rawName: string) => (rawName.startsWith("--") ? table.long.get(rawName.slice(2)) : table.short.get(rawName.slice(1)));
  const takesValue = (rawName: string) => {
    const type = command.args[argName(rawName) ?? ""]?.type;
    return type === "string" || type === "enum";
  };
  const tokens = tokenize(inlineOptionalValues(argv, optional), takesValue);

  const positionals: string[] = [];
  const options: Extract<Token, { kind: "option" }>[] = [];
  let dashedText: string | undefined;
  for (const token of tokens) {
    if (token.kind === "positional") positionals.push(token.value);
    else if (token.kind === "option") options.push(token);
    else dashedText ??= token.value;
  }
  const slots = positionalsOf(command.args);
  // A last positional that takes the rest (`archive ID...`) leaves no word over to be a surplus or a subcommand.
  const rest = slots[slots.length - 1]?.[1].multiple ? Math.max(positionals.length, slots.length) : slots.length;
  // A group's first word names one of its commands: a wrong one is an unknown command, whatever else was given.
  const word = positionals[rest];
  const subCommands = command.subCommands ?? {};
  const known = word !== undefined && Object.hasOwn(subCommands, word);
  if (command.subCommands && word !== undefined && !known) {
    throw unknownCommand(word, commandLine, Object.keys(subCommands), flagNames(command.args));
  }
  const asked = (name: string) => {
    for (const token of options) if (argName(token.rawName) === name) return true;
    return false;
  };
  if (asked("help")) return { help: true, json: asked("json"), flags: {}, args: runArgs({}, {}, positionals) };

  if (dashedText !== undefined) throw notAnOption(dashedText, commandLine, slots.length > 0 ? argv : null);
  const flags: Record<string, string | boolean | string[]> = {};
  for (const token of options) {
    const name = argName(token.rawName);
    if (name === undefined) throw unknownOption(token.rawName, commandLine, flagNames(command.args));
    const def = command.args[name]!;
    const shown = displayName(token.rawName);
    if (def.type === "boolean") {
      if (token.value !== undefined) throw usageError(`option '${shown}' takes no value; run '${commandLine} --help'`);
      flags[name] = true;
      continue;
    }
    if (token.value === undefined) {
      throw usageError(`option '${shown}' needs a value${def.valueHint ? ` (${def.valueHint})` : ""}; run '${commandLine} --help'`);
    }
    if (def.options && !def.options.includes(token.value)) throw notOneOf(`option '${shown}'`, token.value, def.options, commandLine);
    const earlier = flags[name];
    flags[name] = def.multiple ? [...(Array.isArray(earlier) ? earlier : []), token.value] : token.value;
  }

  // A command's name that came after an option or `--` (`agentmail --version send`) did not name the command.
  if (known) throw surplusArgument(word, commandLine, `name the command first: '${commandLine} ${word} …'`);
  if (word !== undefined && !command.checksSurplusArguments) throw surplusArgument(word, commandLine);
  for (let index = 0; index < slots.length; index++) {
    const [name, def] = slots[index]!;
    const value = positionals[index];
    if (value === undefined) {
      if (isRequired(def)) {
        const hint = def.hintWhenMissing ? `; ${def.hintWhenMissing}` : "";
        throw usageError(`missing ${def.valueHint ?? name}; usage: ${usageLine(commandLine, command)}${hint}`);
      }
      continue;
    }
    for (const each of def.multiple ? positionals.slice(index) : [value]) {
      if (def.options && !def.options.includes(each)) throw notOneOf(def.valueHint ?? name, each, def.options, commandLine);
    }
  }
  return { help: false, json: flags.json === true, flags, args: runArgs(command.args, flags, positionals) };
}

/**
 * Each argument under its name, as its declaration says (args.ts): the value given, else the declared default; a
 * switch not given false, a list not given empty, a number read as one (null for an optional value left out).
 */
function runArgs(defs: ArgSpecs, flags: Record<string, string | boolean | string[]>, positionals: string[]): Record<string, unknown> {
  const args: Record<string, unknown> = { _: positionals };
  let next = 0;
  const positional = (def: ArgSpec) => {
    if (!def.multiple) return positionals[next++] ?? def.default;
    const taken = positionals.slice(next);
    next = positionals.length;
    return taken;
  };
  for (const [name, def] of Object.entries(defs)) {
    const value = def.type === "positional" ? positional(def) : (flags[name] ?? def.default);
    if (def.type === "boolean") args[name] = value === true;
    else if (def.multiple) args[name] = value ?? [];
    else if (def.unit !== undefined && typeof value === "string") {
      args[name] = value === "" && def.optionalValue ? null : numberArg(`--${name}`, value, def.unit, { positive: def.positive });
    } else if (value !== undefined) args[name] = value;
  }
  return args;
}

function flagNames(args: ArgSpecs): string[] {
  const dashed = (alias: string) => (alias.length === 1 ? `-${alias}` : `--${alias}`);
  return Object.entries(args).flatMap(([name, def]) => (def.type === "positional" ? [] : [`--${name}`, ...aliasesOf(def).map(dashed)]));
}
