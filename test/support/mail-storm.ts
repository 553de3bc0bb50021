/**
 * Counting a storm the way a Jepsen-style test does: what the senders printed, what failed and how, what the
 * receivers were shown, and from those, what was delivered once, twice, or never. Shared by the storms that kill
 * or restart the Redis server under load.
 */
import { expect } from "bun:test";
import type { Message } from "../../src/mail/message.ts";
import type { Result } from "./e2e.ts";

/** A failed send that says its message may be there names it: `error: message <id> may have been stored: …`. */
const MAYBE =
  /^error: message (\S+) may (?:have been stored|still be delivered): .*; check 'agentmail sent' for it before sending it again$/;

export class StormTally {
  /** Ids the senders printed (exit 0). */
  readonly printed: string[] = [];
  /** The error lines of failed sends. */
  readonly failures: string[] = [];
  /** Ids receives that exited 0 showed, once per showing. */
  readonly received: string[] = [];
  /** Ids receives that failed had printed before failing (shown, but not known to be marked read). */
  readonly shownByFailed: string[] = [];
  /** The error lines of failed receives. */
  readonly receiveFailures: string[] = [];
  /** How long each send took, ms. */
  readonly sendMs: number[] = [];

  /** Records a send: its id when it printed one, else its one error line (the error contract holds either way). */
  send(result: Result, ms: number): void {
    this.sendMs.push(ms);
    if (result.code === 0) {
      expect(result.stdout).toMatch(/^[A-Za-z0-9]{8}\n$/);
      this.printed.push(result.stdout.trim());
      return;
    }
    expect({ code: result.code, stdout: result.stdout }).toEqual({ code: 1, stdout: "" });
    expect(result.stderr).toMatch(/^error: [^\n]+\n$/);
    this.failures.push(result.stderr.trimEnd());
  }

  /** Records a `receive --json`; returns whether it found a message (false: the mailbox had nothing, or it failed). */
  receive(result: Result): boolean {
    // One document a line: the message (or null), and after it, when the receive failed, `{"error": …}`.
    const documents = result.stdout
      .split("\n")
      .filter((line) => line.trim() !== "")
      .map((line) => JSON.parse(line) as (Message & { error?: { message: string } }) | null);
    const message = documents.find((document) => document !== null && document.error === undefined) ?? null;
    if (result.code !== 0) {
      const error = documents.find((document) => document?.error !== undefined)?.error?.message;
      this.receiveFailures.push(error ?? result.stderr.trimEnd());
      if (message) this.shownByFailed.push(message.id);
      return false;
    }
    if (message) this.received.push(message.id);
    return message !== null;
  }

  /** Ids named by failed sends that say their message may be there; every other failure must say nothing was stored. */
  maybeStored(): Set<string> {
    const ids = new Set<string>();
    for (const line of this.failures) {
      const named = MAYBE.exec(line);
      if (named) ids.add(named[1]!);
      else expect(line).toStartWith("error: cannot reach the mail server at ");
    }
    return ids;
  }

  counts() {
    const shownOnce = new Map<string, number>();
    for (const id of this.received) shownOnce.set(id, (shownOnce.get(id) ?? 0) + 1);
    const everShown = new Set([...this.received, ...this.shownByFailed]);
    const maybe = this.maybeStored();
    const printed = new Set(this.printed);
    const sorted = [...this.sendMs].sort((a, b) => a - b);
    return {
      printed: this.printed.length,
      failed: this.failures.length,
      failedMaybeStored: maybe.size,
      receivedOnce: [...shownOnce.values()].filter((times) => times === 1).length,
      duplicates: [...shownOnce.values()].filter((times) => times > 1).length,
      lost: this.printed.filter((id) => !everShown.has(id)).length,
      /** Shown, though no send printed it: must be one a failed send said may be there. */
      unexplained: [...everShown].filter((id) => !printed.has(id) && !maybe.has(id)).length,
      receiveFailures: this.receiveFailures.length,
      slowestSendMs: Math.round(sorted[sorted.length - 1] ?? 0),
    };
  }
}
