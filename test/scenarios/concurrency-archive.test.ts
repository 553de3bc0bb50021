/**
 * Exactly once with the rewrites of rich mail, against the compiled binary: senders, receivers (plain and hook),
 * `archive --read` and `cleanup` at the same time, then the same with archive and cleanup SIGKILLed at random
 * moments. Every printed id must end up exactly once in the live mailbox or the archive, never lost, never shown
 * twice by a reader. Checks are on outcomes only (ids printed, lines in files, ids delivered), never on timing.
 */
import { describe, expect, test } from "bun:test";
import { readdirSync } from "node:fs";
import { join } from "node:path";
import { am, storedMessages, type StoredMessage } from "../support/e2e.ts";
import { serverWithFreshRepos } from "../support/fresh-repos.ts";

const SENDERS = ["s1", "s2", "s3"];
const PER_SENDER = 30;

const world = serverWithFreshRepos("agentmail-conc-rich-", ["bob", ...SENDERS]);

/** Runs the binary as `agent`; with `killAfterMs`, SIGKILLs it after that long if it is still running. */
const spawn = (args: string[], agent: string, killAfterMs?: number) =>
  am(args, { env: world.server.agent(agent).env, cwd: world.repo.dir, killAfterMs });

const live = () => storedMessages(join(world.repo.mailDir, "bob.jsonl"));
const archived = () => storedMessages(join(world.repo.mailDir, ".archive", "bob.jsonl"));

function counts(messages: StoredMessage[]): Map<string, number> {
  const seen = new Map<string, number>();
  for (const message of messages) seen.set(message.id, (seen.get(message.id) ?? 0) + 1);
  return seen;
}

/** Sends PER_SENDER messages from each sender, every third one urgent; returns the ids printed. */
async function senders(failures: string[]): Promise<string[]> {
  const printed: string[] = [];
  await Promise.all(
    SENDERS.map(async (name) => {
      for (let i = 0; i < PER_SENDER; i++) {
        const urgent = i % 3 === 0 ? ["-p", "urgent"] : [];
        const outcome = await spawn(["send", "bob", ...urgent, `${name} #${i}`], name);
        if (outcome.code === 0 && /^[A-Za-z0-9]{8}\n$/.test(outcome.stdout)) printed.push(outcome.stdout.trim());
        else failures.push(`send ${name} #${i}: ${outcome.code} ${outcome.stderr}`);
      }
    }),
  );
  return printed;
}

/** Receives as bob until `done()` and nothing is left; every other call is a hook (urgent first). */
async function receiver(done: () => boolean, failures: string[]): Promise<string[]> {
  const got: string[] = [];
  for (let turn = 0; ; turn++) {
    const finished = done();
    const hook = turn % 2 === 1;
    const outcome = await spawn(hook ? ["receive", "--hook"] : ["receive", "--json"], "bob");
    const id = hook
      ? /\nID: ([A-Za-z0-9]{8})\n/.exec(outcome.stderr)?.[1]
      : (JSON.parse(outcome.stdout || "null") as { id: string } | null)?.id;
    if (outcome.code !== (hook && id ? 2 : 0)) failures.push(`receive: ${outcome.code} ${outcome.stdout} ${outcome.stderr}`);
    if (id) got.push(id);
    else if (finished) return got;
    else await Bun.sleep(5);
  }
}

/** Runs `args` as bob again and again until `done()`; with `kill`, each run may be SIGKILLed at a random moment. */
async function repeat(args: string[], done: () => boolean, failures: string[], kill: boolean): Promise<number> {
  let killed = 0;
  while (!done()) {
    const outcome = await spawn(args, "bob", kill && Math.random() < 0.5 ? Math.random() * 30 : undefined);
    if (outcome.killed) killed++;
    else if (outcome.code !== 0) failures.push(`${args.join(" ")}: ${outcome.code} ${outcome.stdout} ${outcome.stderr}`);
    await Bun.sleep(15);
  }
  return killed;
}

describe("exactly once with archive and cleanup", () => {
  test("send, receive, hook, archive --read and cleanup at once: each printed id once in mailbox ∪ archive, delivered once", async () => {
    const failures: string[] = [];
    let sending = true;
    const printing = senders(failures).finally(() => (sending = false));
    const [printed, received] = await Promise.all([
      printing,
      receiver(() => !sending, failures),
      repeat(["archive", "--read"], () => !sending, failures, false),
      repeat(["cleanup", "--read-hours", "0"], () => !sending, failures, false),
    ]);
    expect(failures).toEqual([]);
    expect(new Set(printed).size).toBe(SENDERS.length * PER_SENDER);
    expect(new Set(received).size).toBe(received.length);

    const everywhere = counts([...live(), ...archived()]);
    for (const id of printed) expect({ id, count: everywhere.get(id) ?? 0 }).toEqual({ id, count: 1 });
    expect(everywhere.size).toBe(printed.length);
    // Whatever was archived had been read; whatever was received is read; nothing unread was archived.
    expect(archived().every((message) => message.read_flag === true && typeof message.read_at === "string")).toBe(true);
    const unread = new Set(
      live()
        .filter((message) => !message.read_flag)
        .map((message) => message.id),
    );
    for (const id of received) expect(unread.has(id)).toBe(false);
    expect(received.length + unread.size).toBe(printed.length);
    // Readers agree: inbox --all and inbox --archived list every id exactly once between them.
    const listed = async (args: string[]) =>
      (JSON.parse((await spawn(["inbox", ...args, "--json"], "bob")).stdout) as StoredMessage[]).map((m) => m.id);
    const shown = [...(await listed(["--all"])), ...(await listed(["--archived"]))];
    expect(shown.length).toBe(printed.length);
    expect(new Set(shown)).toEqual(new Set(printed));
    expect(readdirSync(world.repo.mailDir).filter((name) => /\.(lock|break)$/.test(name) || name.includes(".tmp-"))).toEqual([]);
  });

  test("archive and cleanup SIGKILLed at random: nothing lost, nothing shown twice, the next pass leaves each id once", async () => {
    const failures: string[] = [];
    let sending = true;
    const printing = senders(failures).finally(() => (sending = false));
    const [printed, received, killedArchives, killedCleanups] = await Promise.all([
      printing,
      receiver(() => !sending, failures),
      repeat(["archive", "--read"], () => !sending, failures, true),
      repeat(["cleanup", "--read-hours", "0"], () => !sending, failures, true),
    ]);
    expect(failures).toEqual([]);
    expect(killedArchives + killedCleanups).toBeGreaterThan(0);
    expect(new Set(received).size).toBe(received.length);

    // Before any repair: each printed id is in the mailbox or the archive (a killed pass may have left it in both),
    // and readers show it exactly once.
    const files = counts([...live(), ...archived()]);
    for (const id of printed) expect(files.get(id) ?? 0).toBeGreaterThanOrEqual(1);
    const listed = async (args: string[]) =>
      (JSON.parse((await spawn(["inbox", ...args, "--json"], "bob")).stdout) as StoredMessage[]).map((m) => m.id);
    const shown = [...(await listed(["--all"])), ...(await listed(["--archived"]))];
    expect(shown.length).toBe(new Set(shown).size);
    expect(new Set(shown)).toEqual(new Set([...files.keys()]));
    for (const id of printed) expect(shown).toContain(id);

    // The next pass completes any move a kill interrupted: every id once in the files.
    expect((await spawn(["archive", "--read"], "bob")).code).toBe(0);
    const after = counts([...live(), ...archived()]);
    for (const [id, count] of after) expect({ id, count }).toEqual({ id, count: 1 });
    for (const id of printed) expect(after.has(id)).toBe(true);
    for (const id of received) expect(live().find((message) => message.id === id && !message.read_flag)).toBeUndefined();
  });
});
