function editDistance(a: string, b: string): number {
  const previous = Array.from({ length: b.length + 1 }, (_, i) => i);
  for (let i = 1; i <= a.length; i++) {
    let diagonal = previous[0]!;
    previous[0] = i;
    for (let j = 1; j <= b.length; j++) {
      const above = previous[j]!;
      previous[j] = Math.min(above + 1, previous[j - 1]! + 1, diagonal + (a[i - 1] === b[j - 1] ? 0 : 1));
      diagonal = above;
    }
  }
  return previous[b.length]!;
}

/** The candidates closest to what was typed, best first: case-insensitive edit distance, substrings favoured. */
export function closestNames(typed: string, candidates: readonly string[], limit = 3): string[] {
  const wanted = typed.toLowerCase();
  const scored = [...new Set(candidates)].map((name) => {
    const lower = name.toLowerCase();
    const containment = lower.includes(wanted) || wanted.includes(lower) ? -1 : 0;
    return { name, score: editDistance(wanted, lower) + containment };
  });
  scored.sort((x, y) => x.score - y.score || x.name.localeCompare(y.name));
  return scored.slice(0, limit).map((entry) => entry.name);
}
