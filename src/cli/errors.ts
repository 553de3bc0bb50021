/** The command line's usage errors, worded once, and the one way a failure is reported. */
import { toAgentmailError, usageError, type AgentmailError } from "../mail/errors.ts";
import { displayName } from "../mail/names.ts";
import { closestNames } from "../mail/suggest.ts";
import { shellQuote } from "../mail/next-steps.ts";
import { printJson } from "../output/streams.ts";

const quoted = (text: string) => `'${displayName(text)}'`;

/** Compared without their dashes, so `-z` is not "close" to `-c`: one letter of one is all of it. */
const didYouMean = (typed: string, candidates: readonly string[]) => {
  const bare = (name: string) => name.replace(/^-+/, "");
  const byBareName = new Map(candidates.map((name) => [bare(name), name]));
  const [closest] = closestNames(bare(typed), [...byBareName.keys()], 1);
  return closest === undefined ? "" : `; did you mean ${quoted(byBareName.get(closest)!)}?`;
};

/** "problem; did you mean 'x'? Run …" or "problem; run …": one shape for every usage error. */
const worded = (problem: string, hint: string, next: string) =>
  hint ? `${problem}${hint} ${next[0]!.toUpperCase()}${next.slice(1)}` : `${problem}; ${next}`;

/** `agentmail sned`: the closest command, or failing that the closest option (`agentmail version` → '--version'). */
export function unknownCommand(typed: string, commandLine: string, commands: string[], flags: string[]): AgentmailError {
  const hint = didYouMean(typed, commands) || didYouMean(`--${typed}`, flags);
  const where = commandLine === "agentmail" ? "" : ` for '${commandLine}'`;
  return usageError(worded(`unknown command ${quoted(typed)}${where}`, hint, `run '${commandLine} --help' to see the commands`));
}

/**
 * How to give `word` as text rather than as options: `--` before it. With the command as typed when the word ends
 * it (`agentmail send bob -- '-x is broken'`); otherwise options after `--` would turn into text too.
 */
function dashesBefore(word: string, commandLine: string, argv: readonly string[]): string {
  const step = "to give text that starts with '-', put -- before it";
  if (argv[argv.length - 1] !== word) return `${step}, after every option`;
  const typed = [...argv.slice(0, -1).map((each) => shellQuote(displayName(each))), "--", shellQuote(displayName(word))];
  return `${step}: ${commandLine} ${typed.join(" ")}`;
}

export function unknownOption(typed: string, commandLine: string, flags: string[]): AgentmailError {
  const hint = didYouMean(typed, flags);
  return usageError(worded(`unknown option ${quoted(typed)} for '${commandLine}'`, hint, `run '${commandLine} --help' to see its options`));
}

/**
 * A word that starts with a dash but reads as text (see tokenize): never taken apart into options. `argv` is given
 * when the command takes text (positionals), to show the `--` that makes it text.
 */
export function notAnOption(word: string, commandLine: string, argv: readonly string[] | null): AgentmailError {
  const problem = `${quoted(word)} is not an option of '${commandLine}'`;
  if (argv === null) return usageError(`${problem}; run '${commandLine} --help' to see its options`);
  return usageError(`${problem}; ${dashesBefore(word, commandLine, argv)}`);
}

export function notOneOf(what: string, value: string, options: readonly string[], commandLine: string): AgentmailError {
  const hint = didYouMean(value, options);
  return usageError(worded(`${what} takes one of ${options.join(", ")}, not ${quoted(value)}`, hint, `run '${commandLine} --help'`));
}

/** A positional the command has no place for; `hint` says what the caller most likely meant. */
export function surplusArgument(value: string, commandLine: string, hint = `run '${commandLine} --help'`): AgentmailError {
  return usageError(`unexpected argument ${quoted(value)} for '${commandLine}'; ${hint}`);
}

/** The failure as one JSON document on stdout with --json, else one `error:` line on stderr; returns its exit code. */
export async function reportFailure(thrown: unknown, json: boolean): Promise<number> {
  const error = toAgentmailError(thrown);
  if (json) {
    try {
      printJson({ error: { code: error.code, message: error.message } });
    } catch {
      // stdout is gone; the exit code still tells.
    }
  } else {
    // consola is loaded only when there is something to say: a successful send or receive never pays for it.
    const { log } = await import("../output/log.ts");
    log.error(error.message);
  }
  return error.exitCode;
}
