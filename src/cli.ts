#!/usr/bin/env bun
import { lookUpCallerEarly } from "./identity/lifetime.ts";

const argv = process.argv.slice(2);
lookUpCallerEarly(argv, process.env);
const { main } = await import("./commands/index.ts");

// Set, never process.exit(): an exit right after writing can cut off what a slow pipe has not taken yet.
process.exitCode = await main(argv);
