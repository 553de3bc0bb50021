/**
 * The files the bridges left alone: each sync (`bridge sync`, `bridge run`, the mailman) keeps its complete list in
 * `.bridges/problems.json` (bridges/sync.ts), and doctor names each, with the reason and what to do, as sync did.
 */
import { readProblems } from "../bridges/sync.ts";
import { terminalLine } from "../mail/terminal-text.ts";
import { note, type Finding } from "./finding.ts";

/** `root`: the local root, where the bridges' files are (null: none here). */
export function bridgeFindings(root: string | null): Finding[] {
  if (root === null) return [];
  return readProblems(root).map((left) =>
    note("bridges", `${terminalLine(left.bridge)} ${terminalLine(left.file)}: ${terminalLine(left.reason)} (as of the last sync)`),
  );
}
