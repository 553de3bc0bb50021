/**
 * Strict checking of one command's argv against its citty definition, before citty parses it. citty parses with
 * node:util's parseArgs in non-strict mode: unknown flags, a value given to a boolean and a flag missing its value
 * pass silently, and its runMain takes -h anywhere, even as a flag's value, for a request for help. Here argv is
 * tokenized by the same parseArgs, checked, and handed on in a shape citty parses exactly as it was checked.
 */
import { parseArgs } from "node:util";
import { usageError } from "../core/errors.ts";
import { displayName } from "../core/names.ts";
import { aliasesOf, isRequired, positionalsOf, type ArgSpec, type Resolved } from "./definitions.ts";
import { notOneOf, surplusArgument, unknownCommand, unknownOption } from "./errors.ts";
import { usageLine } from "./help.ts";

interface StrictArgs {
  help: boolean;
  json: boolean;
  /** Flags given, by their long name. */
  flags: Record<string, string | boolean>;
  /**
   * The checked argv in the one shape citty parses as it was checked: `--name` or `--name=value`, then `--` and the
   * positionals. citty alone would drop a value such as `--no-verify` (it takes any `--no-` token for a negation).
   */
  rawArgs: string[];
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
  /** What node:util's parseArgs is told: every long name and alias, with its type and one-letter alias. */
  config: Record<string, { type: "string" | "boolean"; short?: string }>;
  /** Long names and long aliases → the argument's name. */
  long: Map<string, string>;
  /** One-letter aliases → the argument's name. */
  short: Map<string, string>;
}

function optionTable(args: Record<string, ArgSpec>): OptionTable {
  const table: OptionTable = { config: {}, long: new Map(), short: new Map() };
  for (const [name, def] of Object.entries(args)) {
    if (def.type === "positional") continue;
    const type = def.type === "boolean" ? "boolean" : "string";
    table.config[name] = { type };
    table.long.set(name, name);
    for (const alias of aliasesOf(def)) {
      if (alias.length === 1) {
        table.config[name]!.short = alias;
        table.short.set(alias, name);
      } else {
        table.config[alias] = { type };
        table.long.set(alias, name);
      }
    }
  }
  return table;
}

/** Checks argv for `command` (reached as `commandLine`, e.g. "agentmail hooks install"); throws a usage error. */
export function strictArgs(argv: readonly string[], command: Resolved, commandLine: string): StrictArgs {
  const table = optionTable(command.args);
  const optional = new Set(Object.entries(command.args).flatMap(([name, def]) => (def.optionalValue ? [`--${name}`] : [])));
  const args = inlineOptionalValues(argv, optional);
  const { tokens } = parseArgs({ args, options: table.config, allowPositionals: true, strict: false, tokens: true });
  const argName = (rawName: string) => (rawName.startsWith("--") ? table.long.get(rawName.slice(2)) : table.short.get(rawName.slice(1)));

  const positionals = tokens.flatMap((token) => (token.kind === "positional" ? [token.value] : []));
  const slots = positionalsOf(command.args);
  // A group's first word names one of its commands: a wrong one is an unknown command, whatever else was given.
  const word = positionals[slots.length];
  const subCommands = command.subCommands ?? {};
  const known = word !== undefined && Object.hasOwn(subCommands, word);
  if (command.subCommands && word !== undefined && !known) {
    throw unknownCommand(word, commandLine, Object.keys(subCommands), flagNames(command.args));
  }
  const options = tokens.filter((token) => token.kind === "option");
  const help = options.some((token) => argName(token.rawName) === "help");
  if (help) return { help, json: options.some((token) => argName(token.rawName) === "json"), flags: {}, rawArgs: [] };

  const flags: Record<string, string | boolean> = {};
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
    flags[name] = token.value;
  }

  // A command's name that came after an option or `--` (`agentmail --version send`) did not name the command.
  if (known) throw surplusArgument(word, commandLine, `name the command first: '${commandLine} ${word} …'`);
  if (word !== undefined && !command.checksSurplusArguments) throw surplusArgument(word, commandLine);
  slots.forEach(([name, def], index) => {
    const value = positionals[index];
    if (value === undefined) {
      if (isRequired(def)) throw usageError(`missing ${def.valueHint ?? name}; usage: ${usageLine(commandLine, command)}`);
      return;
    }
    if (def.options && !def.options.includes(value)) throw notOneOf(def.valueHint ?? name, value, def.options, commandLine);
  });
  const given = Object.entries(flags).map(([name, value]) => (value === true ? `--${name}` : `--${name}=${value}`));
  const rawArgs = [...given, "--", ...positionals];
  return { help, json: flags.json === true, flags, rawArgs };
}

function flagNames(args: Record<string, ArgSpec>): string[] {
  const dashed = (alias: string) => (alias.length === 1 ? `-${alias}` : `--${alias}`);
  return Object.entries(args).flatMap(([name, def]) => (def.type === "positional" ? [] : [`--${name}`, ...aliasesOf(def).map(dashed)]));
}
