/**
 * The arguments a command declares, and the values its run gets, typed from the declaration: `args.ttl` is a string
 * or undefined, `args.tag` a list, `args.interval` a number, `args.for` one of its options, and a name the command
 * does not declare fails to compile. citty's own types cannot say this: its parsed arguments take any name (an index
 * signature), and it has no lists, optional values or numbers (the parser that gives them is strict-args.ts).
 * Shared blocks of arguments are written `{…} as const satisfies ArgSpecs`, so their names and kinds stay literal.
 */
import { usageError } from "../mail/errors.ts";
import { displayName } from "../mail/names.ts";

/** What a number argument counts, as its errors name it. */
export type Unit = "seconds" | "hours" | "days";

/** An argument: citty's fields (type, description, valueHint, alias, default, required, options), and ours. */
export interface ArgSpec {
  /** A switch, a flag with a value, a value one of `options` (citty's enum), or a word in order. */
  type: "boolean" | "string" | "enum" | "positional";
  description?: string;
  /** The value's name in --help and in errors: `--ttl <duration>`. */
  valueHint?: string;
  alias?: string | readonly string[];
  default?: string | boolean;
  /** A positional is required unless it says false or has a default; a flag never is. */
  required?: boolean;
  /** The values it may take (checked for flags and positionals alike). */
  options?: readonly string[];
  /** A flag whose value may be left out: `--wait`, `--wait 30`, `--wait=30`. Left out, the run gets "" (null for a number). */
  optionalValue?: boolean;
  /**
   * A flag that may be given more than once (`--tag a --tag b`), or a last positional that takes all the remaining
   * words: the run gets the list, in order, empty when none was given (citty keeps only the last value of a flag).
   */
  multiple?: boolean;
  /** What the error for a missing required positional adds to its usage line, e.g. where to find a value. */
  hintWhenMissing?: string;
  /** A number of these (a plain decimal, at least zero): the run gets a number, and a bad one is a usage error. */
  unit?: Unit;
  /** With `unit`: more than zero. */
  positive?: boolean;
}

export type ArgSpecs = Record<string, ArgSpec>;

/** Whether the run always gets a value: a default, a required flag, or a positional not marked optional. */
type AlwaysGiven<D extends ArgSpec> = D extends { default: string | boolean }
  ? true
  : D extends { required: true }
    ? true
    : D extends { type: "positional" }
      ? D extends { required: false }
        ? false
        : true
      : false;

/** One value of a flag or positional: a number, one of its options, or a string. */
type One<D extends ArgSpec> = D extends { unit: Unit } ? number : D extends { options: readonly (infer O)[] } ? O : string;

/** What the run gets for an argument declared as `D`. */
export type ArgValue<D extends ArgSpec> = D extends { type: "boolean" }
  ? boolean
  : D extends { multiple: true }
    ? string[]
    : D extends { optionalValue: true }
      ? One<D> | (D extends { unit: Unit } ? null : never) | undefined
      : AlwaysGiven<D> extends true
        ? One<D>
        : One<D> | undefined;

/** The switches every command takes (definitions.ts declares them); the layer acts on them. */
interface CommonArgs {
  readonly json: boolean;
  readonly help: boolean;
}

/** A run's arguments: each declared one under its name, and every positional word in `_`. */
export type ParsedArgs<T extends ArgSpecs> = { readonly [K in keyof T]: ArgValue<T[K]> } & CommonArgs & { readonly _: string[] };

const DECIMAL = /^-?(\d+\.?\d*|\.\d+)$/;

/**
 * The one parser of numbers (citty has none): a plain decimal, at least zero, and more than zero when `positive`.
 * `flag` and `unit` name it in the error: "--wait takes a number of seconds, not 'abc'".
 */
export function numberArg(flag: string, value: string, unit: Unit, { positive = false } = {}): number {
  const text = value.trim();
  if (!DECIMAL.test(text)) throw usageError(`${flag} takes a number of ${unit}, not '${displayName(value)}'`);
  const number = Number(text);
  if (number < 0 || (positive && number === 0)) {
    throw usageError(`${flag} takes a ${positive ? "positive" : "non-negative"} number of ${unit}, not '${displayName(value)}'`);
  }
  return number;
}
