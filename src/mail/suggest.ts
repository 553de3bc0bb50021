/** Edit distance counting an insertion, a deletion, a substitution or a swap of two neighbours as one edit. */
function editDistance(a: string, b: string): number {
  const rows = Array.from({ length: a.length + 1 }, (_, i) => Array.from({ length: b.length + 1 }, (_, j) => (i === 0 ? j : i)));
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      const row = rows[i]!;
      row[j] = Math.min(rows[i - 1]![j]! + 1, row[j - 1]! + 1, rows[i - 1]![j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1));
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) row[j] = Math.min(row[j]!, rows[i - 2]![j - 2]! + 1);
    }
  }
  return rows[a.length]![b.length]!;
}

/** This many edits or fewer and a name is a likely typo of another: about one in three letters, at least one. */
const tolerance = (typed: string) => Math.max(1, Math.floor(typed.length / 3));

/**
 * The candidates close enough to what was typed to be what was meant, best first: a few edits away
 * (case-insensitive) without replacing the whole of either, or one containing the other when the shorter has three
 * letters or more. An empty name is never suggested; a name far from all candidates gets no suggestion rather than a
 * wrong one.
 */
export function closestNames(typed: string, candidates: readonly string[], limit = 3): string[] {
  const wanted = typed.toLowerCase();
  if (wanted === "") return [];
  const scored = [...new Set(candidates)].flatMap((name) => {
    const lower = name.toLowerCase();
    if (lower === "") return [];
    const distance = editDistance(wanted, lower);
    const contained = Math.min(wanted.length, lower.length) >= 3 && (lower.includes(wanted) || wanted.includes(lower));
    const typo = distance <= tolerance(wanted) && distance < Math.min(wanted.length, lower.length);
    return typo || contained ? [{ name, score: distance - (contained ? 1 : 0) }] : [];
  });
  scored.sort((x, y) => x.score - y.score || x.name.localeCompare(y.name));
  return scored.slice(0, limit).map((entry) => entry.name);
}

/**
 * Which quoting a `send` with surplus words most likely missed: the longest run of leading words that together
 * name a recipient ("carol x" for `send carol x hi`), or null when the words are best read as a message.
 */
export function unquotedRecipient(words: readonly string[], recipients: readonly string[]): string | null {
  for (let count = words.length; count >= 2; count--) {
    const name = words.slice(0, count).join(" ");
    if (recipients.includes(name)) return name;
  }
  return null;
}
