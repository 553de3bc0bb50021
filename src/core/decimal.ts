/**
 * Whether `text` is one or more ASCII digits. A loop rather than /^\d+$/: it runs on every send and receive, and
 * the first regular expression a process runs costs it start-up time (bench/builtins.ts).
 */
export function isDecimal(text: string): boolean {
  if (text === "") return false;
  for (let i = 0; i < text.length; i++) if (text[i]! < "0" || text[i]! > "9") return false;
  return true;
}
