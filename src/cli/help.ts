/**
 * Help for every command, as text or as one JSON document (--json), from one model. Our own renderer because
 * citty's renderUsage colours by CI/TEST variables rather than by whether output is a terminal, names the program
 * from process.argv[1] (a /$bunfs path in the binary) and has no examples.
 */
import type { ArgSpec } from "./args.ts";
import { aliasesOf, isRequired, positionalsOf, resolveCommand, resolved, type Resolved } from "./definitions.ts";

interface HelpDocument {
  command: string;
  description: string;
  version?: string;
  usage: string;
  arguments: { name: string; description: string; required: boolean; options?: readonly string[] }[];
  options: {
    name: string;
    short?: string;
    value?: string;
    value_optional?: boolean;
    repeatable?: boolean;
    default?: string | boolean;
    description: string;
  }[];
  commands: { name: string; description: string }[];
  examples: string[];
}

const positionalLabel = (name: string, def: ArgSpec) => (def.options?.join("|") ?? def.valueHint ?? name) + (def.multiple ? "..." : "");

/** `agentmail hooks install <claude|codex|gemini> [options]`: required arguments in <>, optional ones in []. */
export function usageLine(commandLine: string, command: Resolved): string {
  const positionals = positionalsOf(command.args).map(([name, def]) => {
    const label = positionalLabel(name, def);
    return isRequired(def) ? `<${label}>` : `[${label}]`;
  });
  return [commandLine, command.subCommands ? "<command>" : "", ...positionals, "[options]"].filter(Boolean).join(" ");
}

export async function helpDocument(commandLine: string, command: Resolved, version?: string): Promise<HelpDocument> {
  const commands = await Promise.all(
    Object.entries(command.subCommands ?? {}).map(async ([name, sub]) => {
      const { description } = await resolveCommand((await resolved(sub))!);
      return { name, description };
    }),
  );
  const options = Object.entries(command.args)
    .filter(([, def]) => def.type !== "positional")
    .map(([name, def]) => {
      const short = aliasesOf(def).find((alias) => alias.length === 1);
      const takesValue = def.type === "string" || def.type === "enum";
      return {
        name: `--${name}`,
        ...(short ? { short: `-${short}` } : {}),
        ...(takesValue ? { value: def.options?.join("|") ?? def.valueHint ?? "value" } : {}),
        ...(def.optionalValue ? { value_optional: true } : {}),
        ...(def.multiple ? { repeatable: true } : {}),
        ...(def.default !== undefined ? { default: def.default } : {}),
        description: def.description ?? "",
      };
    });
  return {
    command: commandLine,
    description: command.description,
    ...(version ? { version } : {}),
    usage: usageLine(commandLine, command),
    arguments: positionalsOf(command.args).map(([name, def]) => ({
      name: positionalLabel(name, def),
      description: def.description ?? "",
      required: isRequired(def),
      ...(def.options ? { options: def.options } : {}),
    })),
    options,
    commands,
    examples: command.examples,
  };
}

function table(rows: [string, string][]): string[] {
  const width = Math.max(...rows.map(([left]) => left.length));
  return rows.map(([left, right]) => `  ${left.padEnd(width)}  ${right}`.trimEnd());
}

/** Terse, stable text (agents read it): description, usage, commands, arguments, options with defaults, examples. */
export function helpText(help: HelpDocument): string {
  const out = [help.version ? `${help.description} (v${help.version})` : help.description, "", `Usage: ${help.usage}`];
  if (help.commands.length > 0) out.push("", "Commands:", ...table(help.commands.map((command) => [command.name, command.description])));
  if (help.arguments.length > 0) out.push("", "Arguments:", ...table(help.arguments.map((arg) => [arg.name, arg.description])));
  const flag = (option: HelpDocument["options"][number]) => {
    const value = option.value === undefined ? "" : option.value_optional ? ` [${option.value}]` : ` <${option.value}>`;
    return `${option.short ? `${option.short}, ` : "    "}${option.name}${value}`;
  };
  const described = (option: HelpDocument["options"][number]) =>
    option.default === undefined ? option.description : `${option.description} (default: ${option.default})`;
  out.push("", "Options:", ...table(help.options.map((option) => [flag(option), described(option)])));
  if (help.examples.length > 0) out.push("", "Examples:", ...help.examples.map((example) => `  ${example}`));
  if (help.commands.length > 0) out.push("", `Run '${help.command} <command> --help' for a command's options.`);
  return out.join("\n") + "\n";
}
