import { accessSync, constants, statSync } from "node:fs";
import { delimiter, join, resolve } from "node:path";
import { versionIn } from "../mail/version.ts";

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
