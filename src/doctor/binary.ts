import { accessSync, closeSync, constants, openSync, readFileSync, readSync, realpathSync, statSync } from "node:fs";
import { basename, delimiter, dirname, join, resolve } from "node:path";
import type { Invocation } from "../identity/invocation.ts";
import { shellQuote } from "../mail/next-steps.ts";
import { terminalLine } from "../mail/terminal-text.ts";
import { versionIn } from "../mail/version.ts";
import { note, type Finding } from "./finding.ts";

type Env = Record<string, string | undefined>;

/** Where the shell would find `program`: itself when it holds a slash, else the first executable on PATH. */
export function locate(program: string, env: Env, cwd: string): string | null {
  const executable = (path: string) => {
    try {
      accessSync(path, constants.X_OK);
      return statSync(path).isFile();
    } catch {
      return false;
    }
  };
  if (program.includes("/")) return executable(resolve(cwd, program)) ? resolve(cwd, program) : null;
  for (const dir of (env.PATH ?? "").split(delimiter)) {
    if (dir !== "" && executable(join(dir, program))) return join(dir, program);
  }
  return null;
}

/** The version `<path> --version` names (its first word), or null when it does not run or answer within 5 s. */
export function versionOf(path: string): string | null {
  try {
    const result = Bun.spawnSync([path, "--version"], { stdin: "ignore", stdout: "pipe", stderr: "ignore", timeout: 5_000 });
    return result.exitCode === 0 ? versionIn(result.stdout.toString()) : null;
  } catch {
    return null;
  }
}

/** A script on PATH where the binary belongs: its interpreter line, and the npm package it is the command of, if any. */
export interface Script {
  /** The `#!` line, without `#!`. */
  interpreter: string;
  /** The npm package whose `bin/agentmail` it is (packaging/npm/), when it is one: the name to install again. */
  npmPackage: string | null;
  /** The file itself, through any links (npm links the command into the prefix's bin/). */
  file: string;
}

/** The file's `#!` line when it is a script (what the kernel hands to an interpreter); null for a binary or what cannot be read. */
function interpreterOf(path: string): string | null {
  let fd: number;
  try {
    fd = openSync(path, "r");
  } catch {
    return null;
  }
  try {
    const head = Buffer.alloc(256);
    const read = readSync(fd, head, 0, head.length, 0);
    const text = head.subarray(0, read).toString("latin1");
    return text.startsWith("#!") ? text.slice(2).split("\n")[0]!.trim() : null;
  } finally {
    closeSync(fd);
  }
}

/**
 * Whether `path` is a script rather than the native binary; for the npm package's command (`<package>/bin/agentmail`,
 * a Node program where npm ran no install scripts: packaging/npm/bin/agentmail), also which package it is.
 */
export function scriptAt(path: string): Script | null {
  const interpreter = interpreterOf(path);
  if (interpreter === null) return null;
  let npmPackage: string | null = null;
  let file = path;
  try {
    file = realpathSync(path);
    if (basename(dirname(file)) === "bin" && /\bnode\b/.test(interpreter)) {
      const manifest = JSON.parse(readFileSync(join(dirname(dirname(file)), "package.json"), "utf8")) as { name?: unknown };
      npmPackage = typeof manifest.name === "string" ? manifest.name : null;
    }
  } catch {
    // No package beside it: a script of someone's own.
  }
  return { interpreter, npmPackage, file };
}

/**
 * A note when the `agentmail` on PATH is a script, not the native binary: every hook of every agent runs it, so each
 * pays for the interpreter's start first (Node's costs more than a hook with no mail: docs/install.md). The npm
 * package leaves its Node program there when npm ran no install scripts; run once, it puts the binary in its own place.
 */
export function commandFindings(invocation: Invocation): Finding[] {
  const found = locate("agentmail", invocation.env, invocation.cwd);
  if (found === null) return [];
  const script = scriptAt(found);
  if (script === null) return [];
  const where = terminalLine(found);
  if (script.npmPackage === null) {
    return [
      note(
        "hooks",
        `the agentmail on PATH (${where}) is a script (#!${terminalLine(script.interpreter)}), not the native binary: every hook starts it first`,
        "put the agentmail binary itself on the PATH in its place (docs/install.md), unless the script is there on purpose",
      ),
    ];
  }
  const name = shellQuote(script.npmPackage);
  return [
    note(
      "hooks",
      `the agentmail on PATH (${where}) is the npm package's Node program, not the native binary (npm ran no install ` +
        "scripts), so every hook starts Node first",
      `run it once (agentmail --version) as a user who may write ${terminalLine(dirname(script.file))}: it puts the ` +
        `binary in its place; or install again with its install script: npm install -g --allow-scripts=${name} ${name}`,
    ),
  ];
}
