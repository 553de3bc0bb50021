/**
 * What agentmail adds to citty's command definitions, and how the CLI layer reads them. Commands are citty
 * `defineCommand`s whose arguments are typed by args.ts; the few things citty has no field for ride along on `meta`
 * and on the argument definitions.
 */
import { type CommandDef, type CommandMeta, defineCommand as defineCittyCommand, type Resolvable, type SubCommandsDef } from "citty";
import type { Build } from "../mail/version.ts";
import type { ArgSpec, ArgSpecs, ParsedArgs } from "./args.ts";
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

/** What a command's run gets: citty's context, its arguments typed from their declaration, and print. */
export interface RunContext<T extends ArgSpecs> {
  rawArgs: string[];
  args: ParsedArgs<T>;
  cmd: CommandDef<any>;
  /** Prints an Output now, for output that must be out before the command goes on (receive marks mail read after). */
  print(printed: Output): Promise<void>;
}

/** A command: citty's definition, whose arguments are ours (args.ts) and whose run returns what it prints, an exit code, or nothing. */
export interface Command<T extends ArgSpecs> {
  meta?: Resolvable<CommandMeta>;
  args?: T;
  subCommands?: Resolvable<SubCommandsDef>;
  /** Runs after the command line, whatever it ran (the root's: what the whole command line opened). */
  cleanup?: () => unknown;
  // biome-ignore lint/suspicious/noConfusingVoidType: a run that prints nothing more has no return statement, which is void.
  run?: (context: RunContext<T>) => Output | number | void | Promise<Output | number | void>;
}

/**
 * citty's own defineCommand (an identity function), typed for our arguments and run: the commands share this one
 * file with the layer, since each file the commands share is one more chunk to load at start-up. Only defineCommand
 * is used of citty at run time (citty's parser would bring node:util, measured at 1.5–3 ms of start-up with its
 * runner).
 */
export const defineCommand = defineCittyCommand as unknown as <const T extends ArgSpecs = Record<never, ArgSpec>>(
  def: Command<T>,
) => CommandDef<any>;

/** A subcommand loaded only when it runs: `send: lazy(() => import("./send.ts"))` (citty takes the command, not its module). */
export const lazy = (load: () => Promise<{ default: CommandDef<any> }>) => () => load().then((module) => module.default);

/** A `--wait [seconds]` as the actions take it: not given, undefined; bare, null (no limit); else in ms. */
export const waitMs = (seconds: number | null | undefined): number | null | undefined =>
  seconds === undefined || seconds === null ? seconds : seconds * 1000;

/** Flags every command takes; the layer acts on them. */
const COMMON_ARGS = {
  json: { type: "boolean", description: "Print exactly one JSON document on stdout" },
  help: { type: "boolean", alias: "h", description: "Show this help" },
} as const satisfies ArgSpecs;

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
  args: ArgSpecs;
  subCommands: Record<string, Resolvable<CommandDef>> | undefined;
}

export async function resolveCommand(command: CommandDef<any>): Promise<Resolved> {
  const [meta, args, subCommands] = await Promise.all([resolved(command.meta), resolved(command.args), resolved(command.subCommands)]);
  return {
    command,
    description: meta?.description ?? "",
    examples: meta?.examples ?? [],
    checksSurplusArguments: meta?.checksSurplusArguments === true,
    args: { ...(args as ArgSpecs | undefined), ...COMMON_ARGS },
    subCommands,
  };
}

export function aliasesOf(def: ArgSpec): readonly string[] {
  if (def.alias === undefined) return [];
  return typeof def.alias === "string" ? [def.alias] : def.alias;
}

export function positionalsOf(args: ArgSpecs): [string, ArgSpec][] {
  return Object.entries(args).filter(([, def]) => def.type === "positional");
}

/** citty treats a positional as required unless it has a default or says `required: false`. */
export const isRequired = (def: ArgSpec): boolean => def.type === "positional" && def.required !== false && def.default === undefined;
