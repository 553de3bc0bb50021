/**
 * A command's stdin, in process: the test process's fd 0 points at a file holding `input` for the call, then at what
 * it was. For the hook commands that read their input from stdin themselves (Linux: libc's dup and dup2 through
 * bun:ffi). Nothing else in the test process may read stdin meanwhile; none does.
 */
import { dlopen } from "bun:ffi";
import { closeSync, mkdtempSync, openSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

let libc: ReturnType<typeof openLibc> | null = null;
const openLibc = () =>
  dlopen("libc.so.6", { dup: { args: ["i32"], returns: "i32" }, dup2: { args: ["i32", "i32"], returns: "i32" } }).symbols;

export async function withStdin<T>(input: string | Uint8Array, work: () => Promise<T>): Promise<T> {
  libc ??= openLibc();
  const dir = mkdtempSync(join(tmpdir(), "agentmail-stdin-"));
  writeFileSync(join(dir, "stdin"), input);
  const file = openSync(join(dir, "stdin"), "r");
  // -1: this process runs with stdin closed, and gets it back closed.
  const saved = libc.dup(0);
  if (libc.dup2(file, 0) < 0) throw new Error("could not point stdin at the input file (dup2 failed)");
  closeSync(file);
  try {
    return await work();
  } finally {
    if (saved < 0) closeSync(0);
    else {
      libc.dup2(saved, 0);
      closeSync(saved);
    }
    rmSync(dir, { recursive: true, force: true });
  }
}
