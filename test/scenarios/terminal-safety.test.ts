/**
 * Message bodies, ids and window names are hostile input that must never act on the terminal of whoever reads them:
 * in text output (receive, receive --hook, recipients, errors) control characters other than newline and tab are
 * shown escaped; --json keeps the exact stored text; the mailbox keeps the exact bytes that were sent.
 */
import { describe, expect, test } from "bun:test";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { am, expectError, expectSent, HOOK_OPENING, quoted, storedMessages } from "../support/e2e.ts";
import { serverWithFreshRepos } from "../support/fresh-repos.ts";

const ESC = "\u001b";
const BEL = "\u0007";
/** A byte sequence that would act on a terminal: C0 but newline and tab, DEL, C1 (as UTF-8), bidi controls. */
const ACTIVE = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/;
const HOSTILE_BODY =
  `title ${ESC}]0;pwned${BEL} clip ${ESC}]52;c;cHduZWQ=${BEL} clear ${ESC}[2J\rwiped\b\b c1 \u009b2J ` +
  `dcs ${ESC}P0;1|x${ESC}\\ bidi \u202eevil\nsecond\tline`;
const ESCAPED_BODY =
  "title \\x1b]0;pwned\\x07 clip \\x1b]52;c;cHduZWQ=\\x07 clear \\x1b[2J\\rwiped\\x08\\x08 c1 \\x9b2J " +
  "dcs \\x1bP0;1|x\\x1b\\ bidi \\u202eevil\nsecond\tline";
const EVIL_NAME = `evil${ESC}]0;t${BEL}`;

const world = serverWithFreshRepos("agentmail-terminal-", ["alice", "bob", EVIL_NAME]);
const { env, box } = world;

const run = (who: string, args: string[]) => am(args, { env: env(who), cwd: world.repo.dir });

describe("a hostile body", () => {
  test("receive shows it escaped, under an intact From: line; --json gives the exact text; the mailbox keeps the exact bytes", async () => {
    const first = expectSent(await run("alice", ["send", "bob", HOSTILE_BODY]));
    const second = expectSent(await run("alice", ["send", "bob", HOSTILE_BODY]));
    const before = readFileSync(box("bob"));
    expect(storedMessages(box("bob")).map((message) => message.message)).toEqual([HOSTILE_BODY, HOSTILE_BODY]);

    const text = await run("bob", ["receive"]);
    expect({ code: text.code, stderr: text.stderr }).toEqual({ code: 0, stderr: "1 more unread; run agentmail receive again\n" });
    expect(text.stdout).toBe(`From: alice\nID: ${first}\n\n${quoted(ESCAPED_BODY)}\n`);
    expect(ACTIVE.test(text.stdout)).toBe(false);

    const json = await run("bob", ["receive", "--json"]);
    expect(JSON.parse(json.stdout)).toMatchObject({ id: second, message: HOSTILE_BODY });
    expect(ACTIVE.test(json.stdout)).toBe(false);

    // Only the two read marks changed: every other byte is as sent.
    const after = readFileSync(box("bob"));
    expect(after.length).toBe(before.length);
    expect(after.toString("utf8").replaceAll('"read_flag":true ', '"read_flag":false')).toBe(before.toString("utf8"));
  });

  test("receive --hook shows it escaped on stderr", async () => {
    const id = expectSent(await run("alice", ["send", "bob", HOSTILE_BODY]));
    const hook = await run("bob", ["receive", "--hook"]);
    expect(hook.code).toBe(2);
    expect(hook.stderr).toBe(`${HOOK_OPENING}\nFrom: alice\nID: ${id}\n\n${quoted(ESCAPED_BODY)}\n`);
  });

  test("an id and a sender written into the mailbox by hand are escaped too", async () => {
    mkdirSync(world.repo.mailDir, { recursive: true, mode: 0o700 });
    const created_at = "2026-01-01T00:00:00.000Z";
    const line = { id: `x${ESC}[2J`, from: `ma\rllory`, to: "bob", message: "hi", read_flag: false, created_at };
    writeFileSync(box("bob"), JSON.stringify(line) + "\n", { mode: 0o600 });
    const text = await run("bob", ["receive"]);
    expect(text.stdout).toBe("From: ma\\rllory\nID: x\\x1b[2J\n\n> hi\n");
  });
});

describe("a hostile window name", () => {
  test("recipients, the From: line and error messages show it escaped; --json gives it exactly", async () => {
    const recipients = await run("alice", ["recipients"]);
    expect(recipients.stdout).toBe("alice [you]\nbob\nevil\\x1b]0;t\\x07\n");
    expect(JSON.parse((await run("alice", ["recipients", "--json"])).stdout)).toContainEqual({
      name: EVIL_NAME,
      you: false,
      auto: false,
      status: null,
      last_seen: null,
    });

    const id = expectSent(await run(EVIL_NAME, ["send", "bob", "hello"]));
    expect((await run("bob", ["receive"])).stdout).toBe(`From: evil\\x1b]0;t\\x07\nID: ${id}\n\n> hello\n`);

    const error = expectError(await run("alice", ["send", `nobody${ESC}[2J\u009b`, "hi"]), 1);
    expect(error).toContain("nobody\\x1b[2J\\x9b");
    expect(ACTIVE.test(error)).toBe(false);
  });
});
