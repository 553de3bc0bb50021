/**
 * The executable starts with a JIT ten times as reluctant as usual (build.ts): most commands end within ~10 ms, too
 * soon for compiling their code to pay, and measured faster that way. A command that serves for minutes or hours
 * (the MCP server, the mailman, `bridge run`) gives the JIT its normal policy back before it starts serving.
 */
export function restoreNormalJit(): void {
  Bun.unsafe.setJITPolicy(1);
}
