#!/usr/bin/env bun
import { dispatch } from "./dispatch.ts";

// Set, never process.exit(): an exit right after writing can cut off what a slow pipe has not taken yet.
process.exitCode = await dispatch(process.argv.slice(2));
