/** How a test reads a refusal: the AgentmailError a promise rejects with. */
import { AgentmailError } from "../../src/mail/errors.ts";

/** The AgentmailError `promise` rejects with; fails the test when it resolves, or rejects with anything else. */
export async function rejectionOf(promise: Promise<unknown>): Promise<AgentmailError> {
  const outcome = await promise.then(
    (value: unknown) => ({ resolved: true as const, value }),
    (error: unknown) => ({ resolved: false as const, error }),
  );
  if (outcome.resolved) throw new Error(`expected a refusal, but it resolved to ${JSON.stringify(outcome.value)}`);
  if (!(outcome.error instanceof AgentmailError)) throw outcome.error;
  return outcome.error;
}
