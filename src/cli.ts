#!/usr/bin/env bun
import { startCallerLookup } from "./tmux/caller.ts";

/** Commands whose first need is the caller's identity: the hot path agents run on every turn. */
const NEEDS_IDENTITY = new Set(["send", "receive", "recipients", "status"]);
/** With AGENTMAIL_NAME these may need no tmux call at all (identity/name-claims.ts): tmux is asked only if they must. */
const NAMED_WITHOUT_TMUX = new Set(["send", "receive"]);

const argv = process.argv.slice(2);
const command = argv[0] ?? "";
const named = process.env.AGENTMAIL_NAME && NAMED_WITHOUT_TMUX.has(command);
if (!named && NEEDS_IDENTITY.has(command) && process.env.TMUX && !argv.includes("--help") && !argv.includes("-h")) startCallerLookup();
const { main } = await import("./commands/index.ts");

// Set, never process.exit(): an exit right after writing can cut off what a slow pipe has not taken yet.
process.exitCode = await main(argv);
