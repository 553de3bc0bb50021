#!/usr/bin/env bun
import { startCallerLookup } from "./tmux/caller.ts";

/** Commands whose first need is the caller's identity: the hot path agents run on every turn. */
const NEEDS_IDENTITY = new Set(["send", "receive", "recipients", "status"]);

const argv = process.argv.slice(2);
if (NEEDS_IDENTITY.has(argv[0] ?? "") && process.env.TMUX && !argv.includes("--help") && !argv.includes("-h")) startCallerLookup();
const { main } = await import("./commands/index.ts");

// Set, never process.exit(): an exit right after writing can cut off what a slow pipe has not taken yet.
process.exitCode = await main(argv);
