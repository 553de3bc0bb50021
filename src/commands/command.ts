import type { ArgsDef, ParsedArgs } from "../core/args.ts";

export interface CommandContext {
  args: ParsedArgs;
  /** Set by --json: print exactly one JSON document on stdout. */
  json: boolean;
}

/**
 * The shape of every agentmail command: a citty command definition (meta, args, subCommands, run) whose run gets
 * arguments already parsed strictly by the dispatcher and may return an exit code.
 */
export interface AgentmailCommand {
  meta: { name: string; description: string };
  args?: ArgsDef;
  /** Usage lines shown in --help, each a complete command line. */
  examples?: string[];
  subCommands?: CommandTable;
  run?: (context: CommandContext) => Promise<number | void> | number | void;
}

export type CommandTable = Record<string, () => Promise<AgentmailCommand>>;

export function defineCommand(command: AgentmailCommand): AgentmailCommand {
  return command;
}

export function stringArg(args: ParsedArgs, name: string): string | undefined {
  const value = args[name];
  return typeof value === "string" ? value : undefined;
}

/** Every value of a flag given `multiple: true`, in the order given; none when it was not given. */
export function stringsArg(args: ParsedArgs, name: string): string[] {
  const value = args[name];
  return Array.isArray(value) ? value : typeof value === "string" ? [value] : [];
}
