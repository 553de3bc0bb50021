/**
 * How a test waits: for a CONDITION, never for a fixed time, within a generous bound that says it ran out (a loaded
 * machine only makes a wait longer, and a timeout never reads as a wrong answer). The one place tests poll.
 *
 * A test of a wake (receive --wait, the MCP wait, a store's watch, the feed) must show the wake, not the first look:
 *  - it sends only once the waiter really waits (has looked, found nothing, and blocks on its watch): waiters.ts says
 *    how to see that, in process and of another process;
 *  - a store's watch it drives itself it asks to fall back to a look only after `NO_FALLBACK_MS`, and bounds with
 *    `woken`: only a wake can end the wait within the bound (the Store contract's "wakes within 50 ms" is a latency,
 *    measured by bench/hosts.ts in `npm run bench`; what a test can check without timing it is that a wake came at all).
 */
export const sleep = (ms: number) => new Promise<void>((done) => setTimeout(done, ms));

/**
 * Polls `check` until it returns a truthy value, and returns that value. A slow machine only makes the wait longer:
 * the bound is generous (a check that holds returns at once), and running past it throws
 * `timed out after <s> s waiting for <what>` (`what` may be a function, to describe the state at that moment), so a
 * timeout never reads as a wrong answer.
 */
export async function waitFor<T>(
  what: string | (() => string),
  check: () => T | Promise<T>,
  deadlineMs = 60_000,
  stepMs = 50,
): Promise<NonNullable<T>> {
  const end = Date.now() + deadlineMs;
  for (;;) {
    const value = await check();
    if (value) return value as NonNullable<T>;
    if (Date.now() >= end) {
      throw new Error(`timed out after ${deadlineMs / 1000} s waiting for ${typeof what === "string" ? what : what()}`);
    }
    await sleep(stepMs);
  }
}

/**
 * waitFor under fake timers, which stop the clock and `sleep`: bounded by turns of the event loop instead, and
 * running past them throws `timed out after <n> turns of the event loop waiting for <what>`.
 */
export async function waitForTurns<T>(what: string, check: () => T, most = 100_000): Promise<NonNullable<T>> {
  for (let turn = 0; turn < most; turn++) {
    const value = check();
    if (value) return value as NonNullable<T>;
    await new Promise<void>((resolve) => setImmediate(resolve));
  }
  throw new Error(`timed out after ${most} turns of the event loop waiting for ${what}`);
}

/** An hour: what a test passes as a watch's fallback (`changed(ms)`, a Redis lease), far past any bound it sets. */
export const NO_FALLBACK_MS = 3_600_000;

/**
 * Resolves once `wake` does; throws `not woken within <s> s: <what>` if it has not within `boundMs`. With the watch's
 * fallback set to NO_FALLBACK_MS, only a real wake (the file watcher, a Redis bell) can end the wait in time.
 */
export async function woken(what: string, wake: Promise<unknown>, boundMs = 60_000): Promise<void> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const outcome = await Promise.race([
    wake.then(() => "woken" as const),
    new Promise<"late">((done) => {
      timer = setTimeout(() => done("late"), boundMs);
    }),
  ]).finally(() => clearTimeout(timer));
  if (outcome === "late") {
    throw new Error(`not woken within ${boundMs / 1000} s: ${what}`);
  }
}
