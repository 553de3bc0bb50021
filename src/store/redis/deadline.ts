/** Bounding a wait for the server: every request of the store, and every question to a sentinel, is bounded by one. */

export const TIMED_OUT = Symbol("timed out");

/** `work`, or TIMED_OUT once `ms` have passed first. */
export function within<T>(work: Promise<T>, ms: number): Promise<T | typeof TIMED_OUT> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const expiry = new Promise<typeof TIMED_OUT>((done) => {
    timer = setTimeout(() => done(TIMED_OUT), ms);
  });
  return Promise.race([work, expiry]).finally(() => clearTimeout(timer));
}

/** A duration as a user reads it: `2 s`, `300 ms`. */
export function seconds(ms: number): string {
  return ms % 1000 === 0 ? `${ms / 1000} s` : `${ms} ms`;
}

export const pause = (ms: number) => new Promise<void>((done) => setTimeout(done, ms));
