/**
 * A unified diff of a settings file before and after an edit, for `hooks install --dry-run`. Edits here touch a few
 * places in a file that may be thousands of lines long (~/.claude.json), so only the changed lines and a little
 * context are shown: common lines are matched by a longest-common-subsequence over the part that differs.
 */

const CONTEXT = 2;
/** Beyond this many cells the middle is shown as one replaced block rather than matched line by line. */
const MAX_CELLS = 4_000_000;

type Op = { kind: " " | "-" | "+"; line: string };

function splitLines(text: string): string[] {
  if (text === "") return [];
  return text.replace(/\r?\n$/, "").split(/\r?\n/);
}

function middleOps(before: string[], after: string[]): Op[] {
  if (before.length * after.length > MAX_CELLS) {
    return [...before.map((line): Op => ({ kind: "-", line })), ...after.map((line): Op => ({ kind: "+", line }))];
  }
  // lengths[i][j]: longest common subsequence of before[i..] and after[j..]
  const lengths = Array.from({ length: before.length + 1 }, () => new Uint32Array(after.length + 1));
  for (let i = before.length - 1; i >= 0; i--) {
    for (let j = after.length - 1; j >= 0; j--) {
      lengths[i]![j] = before[i] === after[j] ? lengths[i + 1]![j + 1]! + 1 : Math.max(lengths[i + 1]![j]!, lengths[i]![j + 1]!);
    }
  }
  const ops: Op[] = [];
  let i = 0;
  let j = 0;
  while (i < before.length || j < after.length) {
    if (i < before.length && j < after.length && before[i] === after[j]) {
      ops.push({ kind: " ", line: before[i++]! });
      j++;
    } else if (i < before.length && (j === after.length || lengths[i + 1]![j]! >= lengths[i]![j + 1]!))
      ops.push({ kind: "-", line: before[i++]! });
    else ops.push({ kind: "+", line: after[j++]! });
  }
  return ops;
}

/** The diff, or "" when nothing changed. A missing file is diffed as empty. */
export function unifiedDiff(path: string, before: string, after: string): string {
  if (before === after) return "";
  const a = splitLines(before);
  const b = splitLines(after);
  let prefix = 0;
  while (prefix < a.length && prefix < b.length && a[prefix] === b[prefix]) prefix++;
  let suffix = 0;
  while (suffix < a.length - prefix && suffix < b.length - prefix && a[a.length - 1 - suffix] === b[b.length - 1 - suffix]) suffix++;
  const ops: Op[] = [
    ...a.slice(0, prefix).map((line): Op => ({ kind: " ", line })),
    ...middleOps(a.slice(prefix, a.length - suffix), b.slice(prefix, b.length - suffix)),
    ...a.slice(a.length - suffix).map((line): Op => ({ kind: " ", line })),
  ];
  const out = [`--- ${path}`, `+++ ${path}`];
  const changed = ops.flatMap((op, index) => (op.kind === " " ? [] : [index]));
  let index = 0;
  while (index < changed.length) {
    const first = changed[index]!;
    let last = first;
    while (index + 1 < changed.length && changed[index + 1]! - last <= 2 * CONTEXT + 1) last = changed[++index]!;
    index++;
    const start = Math.max(0, first - CONTEXT);
    const end = Math.min(ops.length, last + CONTEXT + 1);
    const hunk = ops.slice(start, end);
    const oldStart = ops.slice(0, start).filter((op) => op.kind !== "+").length;
    const newStart = ops.slice(0, start).filter((op) => op.kind !== "-").length;
    const oldCount = hunk.filter((op) => op.kind !== "+").length;
    const newCount = hunk.filter((op) => op.kind !== "-").length;
    out.push(`@@ -${oldStart + (oldCount > 0 ? 1 : 0)},${oldCount} +${newStart + (newCount > 0 ? 1 : 0)},${newCount} @@`);
    out.push(...hunk.map((op) => op.kind + op.line));
  }
  return out.join("\n") + "\n";
}
