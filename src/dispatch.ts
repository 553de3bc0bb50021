import { parseCommandArgs } from "./core/args.ts";
import { AgentmailError, toAgentmailError, usageError } from "./core/errors.ts";
import { renderHelp } from "./core/help.ts";
import { displayName } from "./core/names.ts";
import { closestNames } from "./core/suggest.ts";
import { VERSION } from "./core/version.ts";
import { ROOT_DESCRIPTION, topLevelCommands } from "./commands/index.ts";
import type { AgentmailCommand, CommandTable } from "./commands/command.ts";
import { printJson, writeStdout } from "./output/streams.ts";

async function describe(table: CommandTable) {
  return Promise.all(Object.entries(table).map(async ([name, load]) => ({ name, description: (await load()).meta.description })));
}

function unknownCommand(name: string, known: string[], path: string): AgentmailError {
  const [closest] = closestNames(name, known, 1);
  return usageError(`unknown command '${displayName(name)}'${closest ? `; did you mean '${closest}'?` : ""}; run 'agentmail ${path}--help'`);
}

function wantsJson(argv: readonly string[]): boolean {
  const end = argv.indexOf("--");
  return (end === -1 ? argv : argv.slice(0, end)).includes("--json");
}

/**
 * Our own dispatcher around the citty command tree: unknown commands and flags fail with exit 1, --help anywhere
 * before `--` prints help on stdout with exit 0, and every failure becomes one `error:` line on stderr (or one JSON
 * document on stdout with --json) with the exit code it carries.
 */
export async function dispatch(argv: readonly string[]): Promise<number> {
  try {
    return await route(argv);
  } catch (thrown) {
    const error = toAgentmailError(thrown);
    if (wantsJson(argv)) {
      try {
        printJson({ error: { code: error.code, message: error.message } });
      } catch {
        // stdout is gone; the exit code still tells.
      }
    } else {
      // consola is loaded only when there is something to say: a successful send or receive never pays for it.
      const { log } = await import("./output/log.ts");
      log.error(error.message);
    }
    return error.exitCode;
  }
}

async function route(argv: readonly string[]): Promise<number> {
  const [first, ...rest] = argv;
  if (first === undefined || first === "--help" || first === "-h") {
    writeStdout(renderHelp({ path: "", description: `${ROOT_DESCRIPTION} (v${VERSION})`, commands: await describe(topLevelCommands()) }));
    return 0;
  }
  if (first === "--version" || first === "-v") {
    writeStdout(`${VERSION}\n`);
    return 0;
  }
  if (first.startsWith("-")) throw usageError(`unknown option '${displayName(first)}'; put options after the command, run 'agentmail --help'`);
  const commands = topLevelCommands();
  const load = commands[first];
  if (!load) throw unknownCommand(first, Object.keys(commands), "");
  return runCommand(await load(), first, rest);
}

async function runCommand(command: AgentmailCommand, path: string, argv: readonly string[]): Promise<number> {
  const [first, ...rest] = argv;
  if (command.subCommands && first !== undefined && !first.startsWith("-")) {
    const load = command.subCommands[first];
    if (load) return runCommand(await load(), `${path} ${first}`, rest);
    if (!command.run) throw unknownCommand(first, Object.keys(command.subCommands), `${path} `);
  }
  const { help, args } = parseCommandArgs(argv, command.args ?? {}, path);
  if (help || !command.run) {
    const commandList = command.subCommands ? await describe(command.subCommands) : undefined;
    writeStdout(renderHelp({ path, description: command.meta.description, args: command.args, examples: command.examples, commands: commandList }));
    return help || !command.subCommands ? 0 : 1;
  }
  return (await command.run({ args, json: args.json === true })) ?? 0;
}
