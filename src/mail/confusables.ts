/**
 * Names that look alike: `alicе` (its `е` Cyrillic), `ａｌｉｃｅ` (fullwidth) and `alice` are three mailboxes that a
 * person or a model reading a list cannot tell apart, so mail meant for one goes to another. Such a name is allowed
 * (a name is any text that fits the rules of addresses.ts), but `agentmail name` warns.
 *
 * The rule: two different names look alike when their skeletons are equal. A skeleton is the name folded by Unicode
 * NFKC (fullwidth and other compatibility forms become plain letters: `ａ` is `a`, `ﬁ` is `fi`), lower-cased, with
 * the invisible format characters dropped (zero-width spaces and joiners, the soft hyphen, the BOM), and each letter
 * of the small table below replaced by the Latin letter it is drawn like: the Cyrillic and Greek letters that look
 * like Latin ones in common fonts (from Unicode's confusables.txt, restricted to those three scripts). This is not
 * the full Unicode skeleton (UTS #39), which needs a table of thousands of entries; it catches the look-alikes an
 * attacker or an accident produces in practice among names written in these scripts.
 */

/** Cyrillic and Greek lower-case letters drawn like a Latin letter (after lower-casing, so capitals are covered). */
const LOOK_ALIKES: Record<string, string> = {
  // Cyrillic
  а: "a",
  в: "b",
  г: "r",
  е: "e",
  ё: "e",
  з: "3",
  і: "i",
  ї: "i",
  ј: "j",
  к: "k",
  м: "m",
  н: "h",
  о: "o",
  п: "n",
  р: "p",
  с: "c",
  т: "t",
  у: "y",
  х: "x",
  ѕ: "s",
  ԁ: "d",
  һ: "h",
  ӏ: "l",
  ԛ: "q",
  ԝ: "w",
  // Greek
  α: "a",
  β: "b",
  γ: "y",
  ε: "e",
  ζ: "z",
  η: "n",
  ι: "i",
  κ: "k",
  μ: "u",
  ν: "v",
  ο: "o",
  ρ: "p",
  τ: "t",
  υ: "u",
  χ: "x",
  ω: "w",
};

/** Format characters that show as nothing. */
const INVISIBLE = new Set(["\u00ad", "\u200b", "\u200c", "\u200d", "\u2060", "\ufeff"]);

export function skeleton(name: string): string {
  let out = "";
  for (const char of name.normalize("NFKC").toLowerCase()) {
    if (!INVISIBLE.has(char)) out += LOOK_ALIKES[char] ?? char;
  }
  return out;
}

/** The names among `existing` that `name` looks like without being it, each once, in the order given. */
export function lookAlikes(name: string, existing: Iterable<string>): string[] {
  const mine = skeleton(name);
  const found: string[] = [];
  for (const other of existing) if (other !== name && !found.includes(other) && skeleton(other) === mine) found.push(other);
  return found;
}
