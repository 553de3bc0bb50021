import type { Invocation } from "../identity/invocation.ts";
import { AgentmailError } from "../mail/errors.ts";
import { shellQuote } from "../mail/next-steps.ts";
import { terminalLine } from "../mail/terminal-text.ts";
import { inspectStore, repair, type StoreIssue } from "../store/local/inspect.ts";
import { movedReason } from "../store/moved.ts";
import { readTombstone } from "../store/local/tombstone.ts";
import { findRepository, mailRoot } from "../store/paths.ts";
import { fixed, note, ok, problem, type Finding } from "./finding.ts";

const shown = (path: string) => terminalLine(path);
const FIX = "agentmail doctor --fix";

/** Where the store is and why: the variable that put it there, or the repository it belongs to. */
function whereAndWhy(invocation: Invocation, root: string): string {
  const dir = invocation.env.AGENTMAIL_DIR;
  if (dir) return `${shown(root)} (from AGENTMAIL_DIR=${shown(dir)})`;
  const repository = findRepository(invocation.cwd, invocation.env);
  const top = repository?.workTree ? ` of ${shown(repository.workTree)}` : "";
  return `${shown(root)} (mail/ in the common git dir${top}, shared by every worktree)`;
}

function findingFor(issue: StoreIssue): Finding {
  const path = shown(issue.path);
  const what = `${path}: ${issue.detail}`;
  switch (issue.kind) {
    case "symlink":
      return problem("store", what, `rm ${shellQuote(issue.path)}`);
    case "foreign":
      // Never stops mail; and never rm: the store does not own it.
      return note("store", what, `mv ${shellQuote(issue.path)} <somewhere outside the store>`);
    case "misshapen":
      return problem("store", `${what}; agentmail cannot use that name`, `mv ${shellQuote(issue.path)} <somewhere outside the store>`);
    case "mode":
      return problem(
        "store",
        `${what}; other users may read the mail`,
        `chmod ${(issue.wantedMode ?? 0o600).toString(8)} ${shellQuote(issue.path)}`,
      );
    case "owner":
      return problem("store", what, `chown ${typeof process.getuid === "function" ? process.getuid() : "<you>"} ${shellQuote(issue.path)}`);
    case "malformed_lines": {
      const lines = issue.lines ?? [];
      return problem(
        "store",
        `${what}; receive skips them`,
        `with no agentmail running: sed -i '${lines.map((line) => `${line}d`).join(";")}' ${shellQuote(issue.path)}`,
      );
    }
    case "torn_line":
      return note("store", `${what}; a writer was killed mid-append, and the next send ends that line first`);
    case "unparseable":
    case "unreadable":
      return problem("store", issue.detail, null);
    default:
      return problem("store", what, FIX);
  }
}

/** The store's findings; with `fix`, the safe repairs are made and reported as fixed. */
export function storeFindings(invocation: Invocation, fix: boolean): { root: string | null; findings: Finding[] } {
  let root: string;
  try {
    root = mailRoot(invocation.cwd, invocation.env, undefined, { evenIfMoved: true });
  } catch (error) {
    const message = error instanceof AgentmailError ? error.message : String(error);
    return { root: null, findings: [problem("store", message, null)] };
  }
  const moved = readTombstone(root);
  const findings: Finding[] = [
    moved
      ? problem("store", `${movedReason(root, moved)}; every command here fails`, moved.use)
      : ok("store", whereAndWhy(invocation, root)),
  ];
  // A breaker's leftover file must go before the stale lock it guards, or breaking the lock waits on it.
  const first = (issue: StoreIssue) => (fix && issue.kind === "stale_break" ? 0 : 1);
  for (const issue of inspectStore(root).sort((a, b) => first(a) - first(b))) {
    if (fix && issue.fixable) {
      const verb = issue.kind === "bad_cursor" ? "removed the cursor" : issue.kind === "stale_lock" ? "removed the stale lock" : "removed";
      if (repair(issue)) findings.push(fixed("store", `${verb} ${shown(issue.path)} (${issue.detail})`));
      continue;
    }
    findings.push(findingFor(issue));
  }
  return { root, findings };
}
