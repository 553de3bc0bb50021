/**
 * What agentmail adds to citty's command definitions, and how the CLI layer reads them. Commands are plain citty
 * `defineCommand`s; the few things citty has no field for ride along on `meta` and on the argument definitions.
 */
import {
  type ArgDef,
  type ArgsDef,
  type CommandContext,
  type CommandDef,
  defineCommand as defineCittyCommand,
  type Resolvable,
} from "citty";
import { usageError } from "../mail/errors.ts";
import { displayName } from "../mail/names.ts";
import type { Build } from "../mail/version.ts";
import type { Output } from "./output.ts";

/**
 * What a command prints (cli/output.ts), for the commands to import from here: each file of the layer the commands
 * import besides this one would be one more chunk for every command to load at start-up (see defineCommand).
 */
export { JsonArrayStream, output, type Output } from "./output.ts";

declare module "citty" {
  interface CommandMeta {
    /** Usage lines shown in --help, each a complete command line (citty's usage has no examples). */
    examples?: string[];
    /** The command's run reports surplus positionals itself (they are in `args._`), with a hint only it can give. */
    checksSurplusArguments?: boolean;
    /** The root's: the commit and date the binary was built from, which --version prints after the version. */
    build?: Build;
  }
}

/** What a command's run gets besides citty's context. */
export interface RunContext<T extends ArgsDef> extends CommandContext<T> {
  /** Prints an Output now, for output that must be out before the command goes on (receive marks mail read after). */
  print(printed: Output): Promise<void>;
}

/** A command: citty's definition, whose run returns what it prints, an exit code, or nothing. */
export type Command<T extends ArgsDef = ArgsDef> = Omit<CommandDef<T>, "run"> & {
  // biome-ignore lint/suspicious/noConfusingVoidType: a run that prints nothing more has no return statement, which is void.
  run?: (context: RunContext<T>) => Output | number | void | Promise<Output | number | void>;
};

/**
 * citty's own defineCommand (an identity function), typed for our run: the commands share this one file with the
 * layer, since each file the commands share is one more chunk to load at start-up. Only defineCommand is used of
 * citty at run time (citty's parser would bring node:util, measured at 1.5–3 ms of start-up with its runner).
 */
export const defineCommand = defineCittyCommand as <const T extends ArgsDef = ArgsDef>(def: Command<T>) => CommandDef<T>;

/** A subcommand loaded only when it runs: `send: lazy(() => import("./send.ts"))` (citty takes the command, not its module). */
export const lazy = (load: () => Promise<{ default: CommandDef<any> }>) => () => load().then((module) => module.default);

const DECIMAL = /^-?(\d+\.?\d*|\.\d+)$/;

/**
 * The one parser of numeric flags (citty has no number type): a plain decimal, at least zero, and more than zero
 * when `positive`. `flag` and `unit` name it in the error: "--wait takes a number of seconds, not 'abc'". It lives
 * here, with defineCommand, for the same reason of start-up.
 */
export function numberArg(flag: string, value: string, unit: "seconds" | "hours" | "days", { positive = false } = {}): number {
  const text = value.trim();
  if (!DECIMAL.test(text)) throw usageError(`${flag} takes a number of ${unit}, not '${displayName(value)}'`);
  const number = Number(text);
  if (number < 0 || (positive && number === 0)) {
    throw usageError(`${flag} takes a ${positive ? "positive" : "non-negative"} number of ${unit}, not '${displayName(value)}'`);
  }
  return number;
}

/** `--wait`, whose value may be left out: not given, undefined; bare, null (no limit); else that many seconds, in ms. */
export function waitArg(value: string | undefined): number | null | undefined {
  if (value === undefined) return undefined;
  if (value === "") return null;
  return numberArg("--wait", value, "seconds") * 1000;
}

/** An argument as the layer reads it: citty's definition plus the fields citty does not know. */
export type ArgSpec = ArgDef & {
  /** The values a positional may take (citty checks `options` only on enum flags). */
  options?: string[];
  /** A string flag whose value may be left out: `--wait`, `--wait 30`, `--wait=30` (citty has no optional values). */
  optionalValue?: boolean;
  /**
   * A string flag that may be given more than once (`--tag a --tag b`), or a last positional that takes all the
   * remaining arguments: its value is the list of them, in order (citty keeps only the last value of a flag).
   */
  multiple?: boolean;
  /** What the error for a missing required positional adds to its usage line, e.g. where to find a value. */
  hintWhenMissing?: string;
};

/** A string argument as given, or undefined (a list argument given once is its only value). */
export function stringArg(args: Record<string, unknown>, name: string): string | undefined {
  const value = args[name];
  return typeof value === "string" ? value : undefined;
}

/** Every value of a `multiple` argument, in order; none when it was not given. */
export function stringListArg(args: Record<string, unknown>, name: string): string[] {
  const value = args[name];
  return Array.isArray(value) ? value : typeof value === "string" ? [value] : [];
}

/** Flags every command takes; the layer acts on them. */
const COMMON_ARGS = {
  json: { type: "boolean", description: "Print exactly one JSON document on stdout" },
  help: { type: "boolean", alias: "h", description: "Show this help" },
} as const satisfies ArgsDef;

/** citty lets meta, args and subCommands be values, promises or (lazy) functions; it does not export its resolver. */
export async function resolved<T>(value: Resolvable<T> | undefined): Promise<T | undefined> {
  return typeof value === "function" ? await (value as () => T | Promise<T>)() : await value;
}

export interface Resolved {
  command: CommandDef<any>;
  description: string;
  examples: string[];
  checksSurplusArguments: boolean;
  /** The command's own arguments followed by COMMON_ARGS. */
  args: Record<string, ArgSpec>;
  subCommands: Record<string, Resolvable<CommandDef>> | undefined;
}

export async function resolveCommand(command: CommandDef<any>): Promise<Resolved> {
  const [meta, args, subCommands] = await Promise.all([resolved(command.meta), resolved(command.args), resolved(command.subCommands)]);
  return {
    command,
    description: meta?.description ?? "",
    examples: meta?.examples ?? [],
    checksSurplusArguments: meta?.checksSurplusArguments === true,
    args: { ...(args as Record<string, ArgSpec> | undefined), ...COMMON_ARGS },
    subCommands,
  };
}

export function aliasesOf(def: ArgSpec): string[] {
  if (!("alias" in def) || def.alias === undefined) return [];
  return typeof def.alias === "string" ? [def.alias] : def.alias;
}

export function positionalsOf(args: Record<string, ArgSpec>): [string, ArgSpec][] {
  return Object.entries(args).filter(([, def]) => def.type === "positional");
}

/** citty treats a positional as required unless it has a default or says `required: false`. */
export const isRequired = (def: ArgSpec): boolean => def.type === "positional" && def.required !== false && def.default === undefined;
