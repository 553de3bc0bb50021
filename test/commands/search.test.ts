/** `agentmail search` end to end: the caller's mail and the mail it sent, by subject or body, substring or --regex. */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdirSync, writeFileSync } from "node:fs";
import { dirname } from "node:path";
import { am, expectError, oneJson } from "../support/e2e.ts";
import { RedisServer } from "../support/redis-server.ts";
import { richMailWorld, idsOf } from "../support/rich-mail.ts";

const { as, ok, send, mailbox, archiveOf } = richMailWorld();

describe("search", () => {
  test("search: the caller's mail and the mail it sent, by subject or body, substring or --regex", async () => {
    const mine = await send("alice", ["bob", "-s", "Deploy window", "tonight at 10"]);
    const theirs = await send("bob", ["alice", "the DEPLOY failed"]);
    await send("carol", ["bob", "deploy is not alice's business"]);
    expect(idsOf(oneJson(await am(["search", "deploy", "--json"], as("alice"))))).toEqual([mine, theirs]);
    expect(await ok("alice", ["search", "--regex", "fail(ed)?$"])).toMatch(new RegExp(`^${theirs}  \\d+s  bob  \\* the DEPLOY failed\\n$`));
    expect(await ok("alice", ["search", "nothing like it"])).toBe("No messages\n");
    expect(expectError(await am(["search", "--regex", "a{2,1}"], as("alice")), 1)).toBe(
      "error: invalid regular expression 'a{2,1}': numbers out of order in {} quantifier; fix it, or search without --regex for plain text\n",
    );
  });
});

/**
 * A history as long stores hold it, written the way the store writes it: alice's mailbox (past one 4 MiB chunk), her
 * archive, and what she sent to carol, their lines' times interleaved, one line in eleven, seven and five holding
 * the ticket (in either case, in the body or the subject). Carol's mail from bob holds it too, and is not alice's.
 */
function longHistory(): string[] {
  const t0 = Date.parse("2026-02-01T00:00:00.000Z");
  const matches: { id: string; at: number }[] = [];
  const files = new Map<string, string[]>();
  const put = (path: string, record: Record<string, unknown>, at: number, match: boolean) => {
    const lines = files.get(path) ?? files.set(path, []).get(path)!;
    lines.push(JSON.stringify({ ...record, read_flag: true, created_at: new Date(t0 + at).toISOString() }));
    if (match) matches.push({ id: record.id as string, at });
  };
  const body = (n: number, match: boolean) =>
    `deploy log ${n}: ${match ? (n % 2 === 0 ? "see TICKET-4242" : "see ticket-4242 again") : "nothing to see"}`;
  const id = (prefix: string, n: number) => `${prefix}${n.toString(36).padStart(7, "0")}`;
  for (let n = 0; n < 25_000; n++) {
    const inBody = n % 11 === 0;
    const inSubject = n % 97 === 5;
    const record = { id: id("L", n), from: n % 3 === 0 ? "bob" : "carol", to: "alice", message: body(n, inBody) };
    put(mailbox("alice"), inSubject ? { ...record, subject: "Ticket-4242 follow-up" } : record, n * 3000, inBody || inSubject);
  }
  for (let n = 0; n < 3_000; n++) {
    put(archiveOf("alice"), { id: id("A", n), from: "bob", to: "alice", message: body(n, n % 7 === 0) }, n * 3000 + 1000, n % 7 === 0);
  }
  for (let n = 0; n < 1_500; n++) {
    put(mailbox("carol"), { id: id("S", n), from: "alice", to: "carol", message: body(n, n % 5 === 0) }, n * 3000 + 2000, n % 5 === 0);
    put(mailbox("carol"), { id: id("B", n), from: "bob", to: "carol", message: body(n, true) }, n * 3000 + 2500, false);
  }
  // A message alice sent herself is in her mailbox and in what she sent: listed once.
  put(mailbox("alice"), { id: "Self4242", from: "alice", to: "alice", message: "note to self: TICKET-4242" }, 1500, true);
  for (const [path, lines] of files) {
    mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
    writeFileSync(path, lines.join("\n") + "\n", { mode: 0o600 });
  }
  return matches.sort((a, b) => a.at - b.at).map((match) => match.id);
}

describe("search over a long history where many messages match", () => {
  let redis: RedisServer;
  beforeAll(async () => {
    redis = await RedisServer.start();
  });
  afterAll(async () => {
    await redis?.remove();
  });

  test("every match is listed once, oldest first, in text and JSON, on the file store and on Redis", async () => {
    const expected = longHistory();
    expect(expected.length).toBeGreaterThan(3_000);
    const textIds = (stdout: string) =>
      stdout
        .trimEnd()
        .split("\n")
        .map((line) => line.slice(0, line.indexOf("  ")));
    const file = as("alice");
    expect(textIds(await ok("alice", ["search", "ticket-4242"]))).toEqual(expected);
    expect(idsOf(oneJson(await am(["search", "TICKET-4242", "--json"], file)))).toEqual(expected);
    expect(textIds(await ok("alice", ["search", "--regex", "ticket-(42){2}"]))).toEqual(expected);
    // The same history moved to a private redis-server: read a page of each stream at a time.
    const redisEnv = { ...file.env, AGENTMAIL_NAMESPACE: `search-${process.pid}` };
    const moved = await am(["migrate", "--to", redis.url, "--keep-source", "--json"], { env: redisEnv, cwd: file.cwd });
    expect({ code: moved.code, stderr: moved.stderr }).toEqual({ code: 0, stderr: "" });
    const onRedis = { env: { ...redisEnv, AGENTMAIL_URL: redis.url }, cwd: file.cwd };
    expect(idsOf(oneJson(await am(["search", "ticket-4242", "--json"], onRedis)))).toEqual(expected);
    expect(idsOf(oneJson(await am(["search", "--regex", "TICKET-(42){2}", "--json"], onRedis)))).toEqual(expected);
  });
});
