/**
 * The command line: finds the command in citty's lazy command tree, parses its argv strictly, shows help or the
 * version, runs the command, and reports any failure once with the exit code it carries (citty's runMain would print
 * usage and exit 1 on every error, and its process.exit() can cut off what a slow pipe has not taken yet).
 */
import type { CommandDef } from "citty";
import { printJson, writeStdout } from "../output/streams.ts";
import type { ArgSpecs, ParsedArgs } from "./args.ts";
import { resolveCommand, resolved, type Command, type Resolved } from "./definitions.ts";
import { printOutput, type Output } from "./output.ts";
import { reportFailure } from "./errors.ts";
import { helpDocument, helpText } from "./help.ts";
import { strictArgs } from "./strict-args.ts";
import { versionLine } from "../mail/version.ts";

/** --json and --help may come before the command's name too: `agentmail --json send bob hi`. */
const LEADING_FLAGS = new Set(["--json", "--help", "-h"]);

interface Located {
  command: Resolved;
  /** The words that named it: ["hooks", "install"]. */
  path: string[];
  /** Its own argv. */
  argv: string[];
}

/** Walks the tree along leading words (citty 0.2 does not export its resolveSubCommand). */
async function locate(root: CommandDef<any>, argv: readonly string[]): Promise<Located> {
  let command = await resolveCommand(root);
  const path: string[] = [];
  const carried: string[] = [];
  let rest = [...argv];
  for (;;) {
    let at = 0;
    while (at < rest.length && LEADING_FLAGS.has(rest[at]!)) at++;
    const name = rest[at];
    const subCommands = command.subCommands ?? {};
    const sub = name !== undefined && Object.hasOwn(subCommands, name) ? subCommands[name] : undefined;
    if (sub === undefined) return { command, path, argv: [...carried, ...rest] };
    command = await resolveCommand((await resolved(sub))!);
    path.push(name!);
    carried.push(...rest.slice(0, at));
    rest = rest.slice(at + 1);
  }
}

/** Before argv is parsed (or when it cannot be), --json anywhere before `--` asks for a JSON error. */
function wantsJson(argv: readonly string[]): boolean {
  const end = argv.indexOf("--");
  return (end === -1 ? argv : argv.slice(0, end)).includes("--json");
}

/** Runs one command line against the command tree `root` and returns its exit code. */
export async function run(root: CommandDef<any>, argv: readonly string[]): Promise<number> {
  const meta = await resolved(root.meta);
  const version = meta?.version ?? "";
  // The bare version is answered before anything is parsed: it is what start-up is measured against.
  if (argv.length === 1 && (argv[0] === "--version" || argv[0] === "-v")) {
    writeStdout(`${versionLine(version, meta?.build)}\n`);
    return 0;
  }
  let json = wantsJson(argv);
  try {
    const { command, path, argv: own } = await locate(root, argv);
    const commandLine = [meta?.name ?? "agentmail", ...path].join(" ");
    const parsed = strictArgs(own, command, commandLine);
    json = parsed.json;
    if (path.length === 0 && parsed.flags.version === true && !parsed.help) {
      const build = meta?.build;
      if (json) printJson({ version, commit: build?.commit ?? null, built_at: build?.builtAt ?? null });
      else writeStdout(`${versionLine(version, build)}\n`);
      return 0;
    }
    if (parsed.help || !command.command.run) {
      const help = await helpDocument(commandLine, command, path.length === 0 ? version : undefined);
      if (json) printJson(help);
      else writeStdout(helpText(help));
      return 0;
    }
    // The run gets what citty's runCommand would give it, its arguments read as declared (strict-args.ts, the values
    // args.ts types), and print. Not runCommand itself: it parses again with node:util (with citty, 1.5–3 ms more
    // start-up for send and receive) and would also run a parent's run after its subcommand.
    const print = (printed: Output) => printOutput(printed, parsed.json);
    const run = command.command.run as Command<ArgSpecs>["run"] & {};
    const result = await run({ rawArgs: own, args: parsed.args as ParsedArgs<ArgSpecs>, cmd: command.command, print });
    if (typeof result === "number") return result;
    if (result === undefined) return 0;
    await print(result);
    return result.exitCode ?? 0;
  } catch (thrown) {
    return reportFailure(thrown, json);
  } finally {
    // The tree's cleanup, as citty's runner would run it after the command: what the whole command line opened.
    await (root.cleanup as Command<ArgSpecs>["cleanup"])?.();
  }
}
