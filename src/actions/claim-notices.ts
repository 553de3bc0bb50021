/**
 * Conflicts as mail. When a claim (or an edit the guard stops) runs into another agent's claim, the holder is told
 * who asked, and the asker that it waits and will be told; when a claim with waiters goes (released, run out, or its
 * holder gone), each waiter is told the path is free. Each is told once: a holder hears of an asker the first time it
 * asks (claims.ts keeps the waiters), in one notice however many of its claims the asker ran into, and a release of
 * many claims sends each waiter one notice. The mail comes from SYSTEM_NAME, agentmail's own name, which no agent may
 * carry (mail/addresses.ts): answer the agent it names instead.
 */
import { describeClaim, distinctClaims, listBounded, type Conflict, type FileClaim, type Swept } from "../claims/claims.ts";
import { SYSTEM_NAME } from "../mail/addresses.ts";
import { MAX_SUBJECT_CHARS, type MailFields } from "../mail/fields.ts";
import { cut } from "../mail/format.ts";
import { createMessage, MAX_MESSAGE_BYTES } from "../mail/message.ts";
import type { Store } from "../store/store.ts";

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
    await store.append(
      createMessage(SYSTEM_NAME, to, withinLimit(body), new Date(), { subject: cut(subject, MAX_SUBJECT_CHARS), type, tags: ["claims"] }),
    );
  } catch (error) {
    warnings.push(`could not tell ${to} by mail (${error instanceof Error ? error.message : String(error)})`);
  }
}

/**
 * A notice obeys the message size limit like any message: its lists are bounded (MAX_LISTED), and a body that is still
 * over the limit (paths of 1,024 characters, many holders) is cut, saying so.
 */
function withinLimit(body: string): string {
  if (Buffer.byteLength(body) <= MAX_MESSAGE_BYTES) return body;
  // At most 4 bytes a character, and room for the note.
  return `${cut(body, Math.floor(MAX_MESSAGE_BYTES / 4) - 100)}\n(cut at the message size limit: 'agentmail claims' lists every claim)`;
}

/** `a` for one, `a and 3 more` for four: a subject names the first of a list. */
const firstOf = (items: readonly string[]) => (items.length > 1 ? `${items[0]} and ${items.length - 1} more` : items[0]!);

/** Groups by a key, keeping the order in which keys were first met. */
function groupBy<T>(items: readonly T[], key: (item: T) => string): Map<string, T[]> {
  const groups = new Map<string, T[]>();
  for (const item of items) {
    const group = groups.get(key(item));
    if (group) group.push(item);
    else groups.set(key(item), [item]);
  }
  return groups;
}

/**
 * Tells the holders an asker ran into (`news`: once per claim) and the asker that it waits on them: one notice per
 * holder, listing its claims in the way, and one to the asker, each list bounded (MAX_LISTED, the rest counted).
 */
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
  const askedIn = (conflicts: readonly Conflict[]) => [...new Set(conflicts.map((conflict) => conflict.asked))];
  const claimsIn = (conflicts: readonly Conflict[]) => distinctClaims(conflicts.map((conflict) => conflict.held));
  const more = (count: number) => `and ${count} more ('agentmail claims' lists them)`;
  for (const [holder, conflicts] of groupBy(news, (conflict) => conflict.held.holder)) {
    const asked = askedIn(conflicts);
    const held = claimsIn(conflicts);
    const wanted = listBounded(asked, ", ", (count) => `${count} more paths`);
    const release =
      held.length === 1 ? `agentmail release ${held[0]!.path}` : "agentmail release <path>... (all of yours: agentmail release)";
    const body =
      held.length === 1
        ? `${asker} ${how} ${wanted}, which your claim ${describeClaim(held[0]!, now)} covers. ${asker} waits for it and will be told ` +
          `by mail when it is free. When you are done with it: ${release}`
        : `${asker} ${how} ${wanted}, which ${held.length} of your claims cover:\n` +
          `${listBounded(
            held.map((claim) => `- ${describeClaim(claim, now)}`),
            "\n",
            (count) => `- ${more(count)}`,
          )}\n` +
          `${asker} waits for them and will be told by mail when they are free. When you are done with them: ${release}`;
    const answer = ` (or the release tool). To answer ${asker}: agentmail send ${asker} "…".`;
    await notify(store, holder, `claim wanted: ${firstOf(asked)}`, body + answer, "alert", warnings);
  }
  const held = claimsIn(news);
  const asked = askedIn(news);
  const lines = listBounded(
    held.map((claim) => `- ${describeClaim(claim, now)}`),
    "\n",
    (count) => `- ${more(count)}`,
  );
  const first = news[0]!;
  const body =
    `You ${how} ${listBounded(asked, ", ", (count) => `${count} more paths`)}, claimed by another agent:\n${lines}\n` +
    `Its holder has been told. You will get mail when it is free. Meanwhile ask the holder ` +
    `(agentmail send ${first.held.holder} "…"), or wait for it (agentmail claim ${first.asked} --wait SECONDS).`;
  await notify(store, asker, `${ATTEMPTS[attempt].refused}: ${firstOf(asked)}`, body, "status", warnings);
  return warnings;
}

/**
 * Tells the waiters of claims that went (released by `releaser`, or swept) that the paths are free: one notice per
 * waiter, listing what went (bounded, the rest counted).
 */
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
  const told = gone.flatMap((entry) =>
    entry.claim.waiters.filter((waiter) => waiter !== releaser && waiter !== entry.claim.holder).map((waiter) => ({ waiter, ...entry })),
  );
  const again = "Claim what you asked for again if you still need it (agentmail claim <path>, or the claim tool).";
  for (const [waiter, freed] of groupBy(told, (entry) => entry.waiter)) {
    const paths = freed.map(({ claim }) => claim.path);
    const body =
      freed.length === 1
        ? `${freed[0]!.claim.path} is free: ${freed[0]!.why}. ${again}`
        : `${freed.length} paths you waited for are free:\n` +
          `${listBounded(
            freed.map(({ claim, why }) => `- ${claim.path}: ${why}`),
            "\n",
            (count) => `- and ${count} more`,
          )}\n${again}`;
    await notify(store, waiter, `claim released: ${firstOf(paths)}`, body, "status", warnings);
  }
  return warnings;
}
