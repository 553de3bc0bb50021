/** The longest hook input read: a post-tool hook's input holds the tool's whole output. */
const MAX_HOOK_INPUT = 64 * 1024 * 1024;

/** The hook's JSON on stdin, for identity/hook-invocation.ts (read only in Codex's daemon, so loaded only then). */
export async function hookStdin(): Promise<string> {
  const { readStdin } = await import("../input/stdin.ts");
  return readStdin(MAX_HOOK_INPUT);
}
