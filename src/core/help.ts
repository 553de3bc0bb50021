import { COMMON_ARGS, type ArgDef, type ArgsDef } from "./args.ts";

export interface HelpSubject {
  path: string;
  description: string;
  args?: ArgsDef;
  examples?: string[];
  commands?: { name: string; description: string }[];
}

function flagLabel(name: string, def: ArgDef): string {
  const aliases = def.alias === undefined ? [] : Array.isArray(def.alias) ? def.alias : [def.alias];
  const short = aliases.find((alias) => alias.length === 1);
  const value = def.type === "boolean" ? "" : def.optionalValue ? ` [${def.valueHint ?? "value"}]` : ` <${def.options?.join("|") ?? def.valueHint ?? "value"}>`;
  return `${short ? `-${short}, ` : "    "}--${name}${value}`;
}

function table(rows: [string, string][]): string[] {
  const width = Math.max(...rows.map(([left]) => left.length));
  return rows.map(([left, right]) => `  ${left.padEnd(width)}  ${right}`.trimEnd());
}

/** Terse, stable help text (agents read it): usage line, arguments, options, commands, examples. */
export function renderHelp(subject: HelpSubject): string {
  const args = { ...subject.args, ...COMMON_ARGS };
  const positionals = Object.entries(args).filter(([, def]) => def.type === "positional");
  const flags = Object.entries(args).filter(([, def]) => def.type !== "positional");
  const usage = [
    `agentmail ${subject.path}`.trim(),
    subject.commands?.length ? "<command>" : "",
    ...positionals.map(([name, def]) => `[${def.options?.join("|") ?? def.valueHint ?? name}]`),
    "[options]",
  ].filter(Boolean);
  const out = [`${subject.description}`, "", `Usage: ${usage.join(" ")}`];
  if (subject.commands?.length) {
    out.push("", "Commands:", ...table(subject.commands.map((command) => [command.name, command.description])));
  }
  if (positionals.length > 0) {
    out.push("", "Arguments:", ...table(positionals.map(([name, def]) => [def.valueHint ?? name, def.description ?? ""])));
  }
  out.push("", "Options:", ...table(flags.map(([name, def]) => [flagLabel(name, def), def.description ?? ""])));
  if (subject.examples?.length) out.push("", "Examples:", ...subject.examples.map((example) => `  ${example}`));
  if (subject.commands?.length) out.push("", `Run 'agentmail ${subject.path ? subject.path + " " : ""}<command> --help' for a command's options.`);
  return out.join("\n") + "\n";
}
