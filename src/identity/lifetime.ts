/**
 * What identity does around a whole command: it starts the caller's tmux lookup before the command is even loaded
 * (the entry asks, src/cli.ts), and closes the stores the command's invocations opened and kept (the command tree's
 * cleanup). Kept apart from caller.ts, so the entry loads nothing else of identity.
 */
import { closeStores } from "../store/kept-stores.ts";
import { startCallerLookup } from "../tmux/caller.ts";

type Env = Record<string, string | undefined>;

/** Commands whose first need is the caller's identity: the hot path agents run on every turn. */
const NEEDS_IDENTITY = new Set(["send", "receive", "recipients", "status"]);
/** With AGENTMAIL_NAME these may need no tmux call at all (name-claims.ts): tmux is asked only if they must. */
const NAMED_WITHOUT_TMUX = new Set(["send", "receive"]);

/**
 * Starts the tmux lookup of the caller when the command line's first need will be the caller's identity: the tmux
 * round trip then overlaps loading the command and opening the store (tmux/caller.ts startCallerLookup).
 */
export function lookUpCallerEarly(argv: readonly string[], env: Env, start: (env: Env) => void = startCallerLookup): void {
  const command = argv[0] ?? "";
  const named = env.AGENTMAIL_NAME && NAMED_WITHOUT_TMUX.has(command);
  if (!named && NEEDS_IDENTITY.has(command) && env.TMUX && !argv.includes("--help") && !argv.includes("-h")) start(env);
}

/** Closes every store kept open for the command's invocations: an open connection would keep the process alive. */
export const closeKeptStores = (): Promise<void> => closeStores();
