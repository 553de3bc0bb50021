/**
 * Conflicts as mail. When a claim (or an edit the guard stops) runs into another agent's claim, the holder is told
 * who asked, and the asker that it waits and will be told; when a claim with waiters goes (released, run out, or its
 * holder gone), each waiter is told the path is free. Each is told once: a holder hears of an asker the first time it
 * asks (claims.ts keeps the waiters). The mail comes from CLAIMS_SENDER, a name no agent answers to: answer the agent
 * it names instead.
 */
import { describeClaim, type Conflict, type FileClaim, type Swept } from "../claims/claims.ts";
import type { MailFields } from "../mail/fields.ts";
import { createMessage } from "../mail/message.ts";
import type { Store } from "../store/store.ts";

export const CLAIMS_SENDER = "agentmail";

/** What the asker did that ran into a claim, as the holder's mail says it, and the subject of the asker's own mail. */
const ATTEMPTS = {
  claim: { did: "asked to claim", refused: "claim refused" },
  edit: { did: "tried to edit", refused: "edit refused" },
  commit: { did: "tried to commit", refused: "commit refused" },
} as const;

export type Attempt = keyof typeof ATTEMPTS;

/** Appends one notice; a notice that cannot be stored is reported in `warnings`, never failing what caused it. */
async function notify(
  store: Store,
  to: string,
  subject: string,
  body: string,
  type: MailFields["type"],
  warnings: string[],
): Promise<void> {
  try {
    await store.append(createMessage(CLAIMS_SENDER, to, body, new Date(), { subject, type, tags: ["claims"] }));
  } catch (error) {
    warnings.push(`could not tell ${to} by mail (${error instanceof Error ? error.message : String(error)})`);
  }
}

/** Tells the holders an asker ran into (`news`: once per claim) and the asker that it waits on them. */
export async function tellConflicts(
  store: Store,
  asker: string,
  news: readonly Conflict[],
  now: number,
  attempt: Attempt,
): Promise<string[]> {
  const warnings: string[] = [];
  const how = ATTEMPTS[attempt].did;
  if (news.length === 0) return warnings;
  for (const { asked, held } of news) {
    const body =
      `${asker} ${how} ${asked}, which your claim ${describeClaim(held, now)} covers. ${asker} waits for it and will be told ` +
      `by mail when it is free. When you are done with it: agentmail release ${held.path}` +
      ` (or the release tool). To answer ${asker}: agentmail send ${asker} "…".`;
    await notify(store, held.holder, `claim wanted: ${asked}`, body, "alert", warnings);
  }
  const lines = news.map(({ held }) => `- ${describeClaim(held, now)}`);
  const first = news[0]!;
  const body =
    `You ${how} ${[...new Set(news.map((conflict) => conflict.asked))].join(", ")}, claimed by another agent:\n${lines.join("\n")}\n` +
    `Its holder has been told. You will get mail when it is free. Meanwhile ask the holder ` +
    `(agentmail send ${first.held.holder} "…"), or wait for it (agentmail claim ${first.asked} --wait SECONDS).`;
  await notify(store, asker, `${ATTEMPTS[attempt].refused}: ${first.asked}`, body, "status", warnings);
  return warnings;
}

/** Tells the waiters of claims that went (released by `releaser`, or swept) that the paths are free. */
export async function tellFreed(
  store: Store,
  released: readonly FileClaim[],
  swept: readonly Swept[],
  releaser: string | null,
): Promise<string[]> {
  const warnings: string[] = [];
  const gone = [
    ...released.map((claim) => ({ claim, why: `${claim.holder} released it` })),
    ...swept.map(({ claim, why }) => ({
      claim,
      why: why === "expired" ? `${claim.holder}'s claim ran out` : `${claim.holder}'s claim ended: ${why}`,
    })),
  ];
  for (const { claim, why } of gone) {
    for (const waiter of claim.waiters) {
      if (waiter === releaser || waiter === claim.holder) continue;
      const body = `${claim.path} is free: ${why}. Claim what you asked for again if you still need it (agentmail claim <path>, or the claim tool).`;
      await notify(store, waiter, `claim released: ${claim.path}`, body, "status", warnings);
    }
  }
  return warnings;
}
