/**
 * `agentmail guard <claude|codex|gemini|git>`: what the installed hooks run before an edit (the agent CLIs' pre-edit
 * hooks, the hook's JSON on stdin) and before a commit (git's pre-commit hook). Quick when nothing is claimed: the
 * identity and tmux are asked only for a file another agent holds. AGENTMAIL_GUARD=off lets everything through.
 *
 * An agent CLI's guard never fails the agent's turn: anything it cannot do lets the edit through, silently. The git
 * guard refuses a commit with exit 1 and says why on stderr; when it cannot check, it says so and lets the commit be.
 */
import { defineCommand } from "../cli/definitions.ts";
import { GUARDED_CLIS, type GuardedCli } from "../claims/guard.ts";
import { writeStderr, writeStdout } from "../output/streams.ts";

/**
 * The invocation, built here rather than with identity/caller.ts: that module (the caller's identity, tmux) loads only
 * when a file another agent holds makes the guard ask who is calling.
 */
const currentInvocation = () => ({ cwd: process.cwd(), env: process.env });

/** The longest hook input read: a tool call's input holds the whole new file (Write) or patch. */
const MAX_HOOK_INPUT = 64 * 1024 * 1024;

/**
 * The pre-edit check of the hook input an agent CLI sent (its JSON, as text): the CLI's own deny answer on stdout when
 * the edit touches a file another agent holds, nothing otherwise. Always 0: input that is no edit, or a check that
 * cannot be made, lets the edit through.
 */
export async function guardAgentEdit(cli: GuardedCli, hookInput: string, autoClaim: boolean): Promise<number> {
  try {
    const { editAttemptOf, refusalOutput, refusalReason, refusedFiles } = await import("../claims/guard.ts");
    const attempt = editAttemptOf(hookInput);
    if (attempt === null || attempt.files.length === 0) return 0;
    // In Codex's app-server daemon, for the pane whose thread edits (identity/hook-invocation.ts); none: let it through.
    const { hookInvocation } = await import("../identity/hook-invocation.ts");
    const invocation = cli === "codex" ? await hookInvocation(() => hookInput) : currentInvocation();
    if (invocation === null) return 0;
    const { checkEdit } = await import("../actions/guard.ts");
    const verdict = await checkEdit(invocation, {
      files: attempt.files,
      cwd: attempt.cwd ?? invocation.cwd,
      autoClaim,
      doing: "edit",
    });
    if (!verdict.allowed) writeStdout(refusalOutput(cli, refusalReason(refusedFiles(verdict.files), verdict.held, verdict.now)));
  } catch {
    // Never in the agent's way: a guard that cannot check lets the edit through.
  }
  return 0;
}

/** The hook's JSON from stdin, or null when it cannot be read (too long, not UTF-8): then the edit goes through. */
async function hookInputOnStdin(): Promise<string | null> {
  try {
    const { readStdin } = await import("../input/stdin.ts");
    return readStdin(MAX_HOOK_INPUT);
  } catch {
    return null;
  }
}

async function guardCommit(): Promise<number> {
  const invocation = currentInvocation();
  const [{ checkCommit }, { describeClaim, listBounded }, { refusedFiles }, { displayName }] = await Promise.all([
    import("../actions/guard.ts"),
    import("../claims/claims.ts"),
    import("../claims/guard.ts"),
    import("../mail/names.ts"),
  ]);
  let verdict: Awaited<ReturnType<typeof checkCommit>>;
  try {
    verdict = await checkCommit(invocation);
  } catch (error) {
    writeStderr(
      `agentmail guard: could not check the claims (${error instanceof Error ? error.message : String(error)}); committing anyway\n`,
    );
    return 0;
  }
  if (verdict.allowed) return 0;
  const lines = [
    `agentmail: this commit changes ${refusedFiles(verdict.files.map(displayName))}, claimed by another agent:`,
    listBounded(
      verdict.held.map((claim) => `  ${describeClaim(claim, verdict.now)}`),
      "\n",
      (more) => `  and ${more} more claims ('agentmail claims' lists them)`,
    ),
    'Ask the holder to release it (agentmail send <holder> "…"), unstage those paths (git restore --staged <path>),',
    "or, as a human who knows better, commit anyway: AGENTMAIL_GUARD=off git commit …",
  ];
  writeStderr(`${lines.join("\n")}\n`);
  return 1;
}

export default defineCommand({
  meta: {
    name: "guard",
    description:
      "Run by the installed hooks: refuse an edit (claude, codex, gemini: the hook's JSON on stdin) or a commit (git) " +
      "touching a path another agent has claimed; AGENTMAIL_GUARD=off lets everything through",
    examples: ["agentmail guard claude < hook-input.json", "agentmail guard git"],
  },
  args: {
    for: {
      type: "positional",
      required: true,
      valueHint: "agent|git",
      options: [...GUARDED_CLIS, "git"],
      description: "Whose hook runs it: claude, codex or gemini (before an edit), or git (before a commit)",
    },
    "auto-claim": { type: "boolean", description: "Before an edit let through, claim its files for you (released at session end)" },
  },
  async run({ args }) {
    if (process.env.AGENTMAIL_GUARD === "off") return 0;
    if (args.for === "git") return guardCommit();
    const hookInput = await hookInputOnStdin();
    return hookInput === null ? 0 : guardAgentEdit(args.for, hookInput, args["auto-claim"]);
  },
});
