import { usageError } from "../core/errors.ts";
import { displayName } from "../core/names.ts";

const DECIMAL = /^-?(\d+\.?\d*|\.\d+)$/;

/**
 * The one parser of numeric flags (citty has no number type): a plain decimal, at least zero, and more than zero
 * when `positive`. `flag` and `unit` name it in the error: "--wait takes a number of seconds, not 'abc'".
 */
export function numberArg(flag: string, value: string, unit: "seconds" | "hours", { positive = false } = {}): number {
  const text = value.trim();
  if (!DECIMAL.test(text)) throw usageError(`${flag} takes a number of ${unit}, not '${displayName(value)}'`);
  const number = Number(text);
  if (number < 0 || (positive && number === 0)) {
    throw usageError(`${flag} takes a ${positive ? "positive" : "non-negative"} number of ${unit}, not '${displayName(value)}'`);
  }
  return number;
}
