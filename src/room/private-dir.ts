/**
 * Where the views keep the few files that must be the person's alone (the page `web --open` hands the browser, the
 * marks of the views running): the user's runtime directory (XDG_RUNTIME_DIR, theirs alone and emptied at logout)
 * when there is one, else the temp dir; each in a directory only the user can enter.
 */
import { mkdirSync, mkdtempSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

type Env = Record<string, string | undefined>;

function parent(env: Env): string {
  const runtime = env.XDG_RUNTIME_DIR;
  if (runtime) {
    try {
      if (statSync(runtime).isDirectory()) return runtime;
    } catch {
      // Not there: the temp dir.
    }
  }
  return tmpdir();
}

/** A fresh directory only the user can enter (mkdtemp makes it 0700). */
export const freshPrivateDir = (env: Env, prefix: string): string => mkdtempSync(join(parent(env), prefix));

/** The directory `name` only the user can enter, made when missing; null when it cannot be (or is not theirs alone). */
export function privateDir(env: Env, name: string): string | null {
  const uid = typeof process.getuid === "function" ? process.getuid() : 0;
  const dir = join(parent(env), `${name}-${uid}`);
  try {
    mkdirSync(dir, { mode: 0o700 });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "EEXIST") return null;
  }
  try {
    const stat = statSync(dir);
    // Another user's directory of that name, or one others may enter, would let them see or plant marks.
    return stat.isDirectory() && stat.uid === uid && (stat.mode & 0o077) === 0 ? dir : null;
  } catch {
    return null;
  }
}
