/**
 * The rules of AGENTMAIL_NAME (src/identity/name-claims.ts), in process: when a name is trusted without tmux, when tmux
 * must agree, who else may read a claimed name, and what a registration records. The fast paths of send and receive
 * run here with $TMUX naming a socket nobody listens on, so any tmux call they made would fail the test.
 */
import { afterEach, beforeEach, describe, expect, test } from "bun:test";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, unlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { whoIsCalling } from "../../../src/identity/caller.ts";
import { type Invocation, tmuxServerOf } from "../../../src/identity/invocation.ts";
import {
  activeClaim,
  claimFor,
  requireClaimStillHeld,
  requireNoClaimElsewhere,
  requireTmuxAgrees,
  trustedName,
} from "../../../src/identity/name-claims.ts";
import { claimedRecipients } from "../../../src/identity/recipients.ts";
import { receiveMail } from "../../../src/actions/receive.ts";
import { sendMail } from "../../../src/actions/send.ts";
import { AgentmailError } from "../../../src/mail/errors.ts";
import { createMessage } from "../../../src/mail/message.ts";
import { appendMessage, takeOldestUnread } from "../../../src/store/file/mailbox.ts";
import { mailboxPath, receiveLockPathOf } from "../../../src/store/local/layout.ts";
import { readClaim, writeRegistration } from "../../../src/store/file/registry.ts";
import { FileStore } from "../../../src/store/file/file-store.ts";
import { HOSTNAME } from "../../../src/store/durable/process-identity.ts";
import type { NameClaims } from "../../../src/store/store.ts";
import { readStatus, writeStatus } from "../../../src/store/file/status.ts";

const SERVER = "/nonexistent/agentmail-test-socket,4242";
let root: string;

beforeEach(() => {
  root = mkdtempSync(join(tmpdir(), "agentmail-identity-"));
});
afterEach(() => rmSync(root, { recursive: true, force: true }));

/** The claims the file store at `dir` keeps, as the product reads them (Store.nameClaims). */
const claimsAt = (dir: string): NameClaims => new FileStore(dir).nameClaims;

/** An environment in pane `pane` of the tmux server SERVER, named `name` (or not named). */
const envOf = (pane: string, name?: string, server = SERVER) => ({
  TMUX: `${server},0`,
  TMUX_PANE: pane,
  AGENTMAIL_DIR: root,
  PATH: process.env.PATH,
  ...(name === undefined ? {} : { AGENTMAIL_NAME: name }),
});
const placeOf = (env: Record<string, string | undefined>): Invocation => ({ cwd: root, env });
/** A registration; a claim unless `server` is null. */
const claim = (name: string, pane: string, server: string | null = SERVER, status: "ready" | "offline" = "ready", host = HOSTNAME) =>
  writeStatus(root, { name, status, pane, at: new Date(), claim: server === null ? undefined : { server, host } });
const HERE = { server: SERVER, host: HOSTNAME };

function thrown(run: () => unknown): AgentmailError {
  try {
    run();
  } catch (error) {
    expect(error).toBeInstanceOf(AgentmailError);
    return error as AgentmailError;
  }
  throw new Error("expected an AgentmailError");
}

async function rejected(promise: Promise<unknown>): Promise<AgentmailError> {
  try {
    await promise;
  } catch (error) {
    expect(error).toBeInstanceOf(AgentmailError);
    return error as AgentmailError;
  }
  throw new Error("expected an AgentmailError");
}

describe("tmuxServerOf", () => {
  test("is $TMUX without its session index: the socket and the server's pid", () => {
    expect(tmuxServerOf({ TMUX: "/tmp/tmux-0/default,1234,5" })).toBe("/tmp/tmux-0/default,1234");
    expect(tmuxServerOf({ TMUX: "/odd,path/sock,77,0" })).toBe("/odd,path/sock,77");
    expect(tmuxServerOf({})).toBeNull();
    expect(tmuxServerOf({ TMUX: "no-commas" })).toBeNull();
  });
});

describe("trustedName: AGENTMAIL_NAME is trusted only as this very pane's claim", () => {
  test("a claim from this pane of this server is trusted", () => {
    claim("bob", "%3");
    expect(trustedName(claimsAt(root), envOf("%3", "bob"))).toBe("bob");
  });

  test("another pane, another server or machine, an offline agent, a plain registration or no claim at all is not", () => {
    claim("bob", "%3");
    claim("frank", "%7", SERVER, "ready", "another-host");
    expect(trustedName(claimsAt(root), envOf("%7", "frank"))).toBeNull();
    expect(trustedName(claimsAt(root), envOf("%4", "bob"))).toBeNull();
    expect(trustedName(claimsAt(root), envOf("%3", "bob", "/other/socket,99"))).toBeNull();
    expect(trustedName(claimsAt(root), envOf("%3", "carol"))).toBeNull();
    claim("dave", "%5", SERVER, "offline");
    expect(trustedName(claimsAt(root), envOf("%5", "dave"))).toBeNull();
    claim("erin", "%6", null);
    expect(trustedName(claimsAt(root), envOf("%6", "erin"))).toBeNull();
  });

  test("no name, an empty name, or no pane in the environment is not", () => {
    claim("bob", "%3");
    expect(trustedName(claimsAt(root), envOf("%3"))).toBeNull();
    expect(trustedName(claimsAt(root), envOf("%3", ""))).toBeNull();
    expect(trustedName(claimsAt(root), { ...envOf("%3", "bob"), TMUX_PANE: undefined })).toBeNull();
    expect(trustedName(claimsAt(root), { ...envOf("%3", "bob"), TMUX: undefined })).toBeNull();
  });
});

describe("activeClaim: a recipient that needs no tmux call", () => {
  test("a live claim of this tmux server", () => {
    claim("bob", "%3");
    expect(activeClaim(claimsAt(root), "bob", envOf("%9"))).toMatchObject({ name: "bob", pane: "%3", active: true });
  });

  test("not a claim of another server, an offline one, or a plain registration", () => {
    claim("bob", "%3", "/other/socket,99");
    claim("carol", "%4", SERVER, "offline");
    claim("dave", "%5", null);
    for (const name of ["bob", "carol", "dave", "nobody"]) expect(activeClaim(claimsAt(root), name, envOf("%9"))).toBeNull();
  });
});

describe("on the tmux path", () => {
  test("AGENTMAIL_NAME must be the window's name", () => {
    expect(() => requireTmuxAgrees(envOf("%3", "bob"), "bob")).not.toThrow();
    expect(() => requireTmuxAgrees(envOf("%3"), "alice")).not.toThrow();
    const error = thrown(() => requireTmuxAgrees(envOf("%3", "bob"), "alice"));
    expect(error.code).toBe("name_mismatch");
    expect(error.exitCode).toBe(1);
    expect(error.message).toBe(
      'AGENTMAIL_NAME is "bob" but the window of pane %3 is named "alice"; ' +
        'name the window "bob" (tmux rename-window -t %3 <name>) or unset AGENTMAIL_NAME',
    );
  });

  test("a name another pane of this server claims is refused; one's own claim, or another server's, is not", () => {
    claim("bob", "%3");
    const error = thrown(() => requireNoClaimElsewhere(claimsAt(root), "bob", envOf("%7")));
    expect(error.code).toBe("duplicate_name");
    expect(error.message).toBe(
      '"bob" is claimed by pane %3, an agent started with AGENTMAIL_NAME=bob; ' +
        "give this window another name, or run 'agentmail status ready' here to take the name over",
    );
    expect(() => requireNoClaimElsewhere(claimsAt(root), "bob", envOf("%3"))).not.toThrow();
    expect(() => requireNoClaimElsewhere(claimsAt(root), "bob", envOf("%7", undefined, "/other/socket,99"))).not.toThrow();
    expect(() => requireNoClaimElsewhere(claimsAt(root), "alice", envOf("%7"))).not.toThrow();
  });

  test("a claim that moved while receiving stops the receive", () => {
    claim("bob", "%3");
    expect(() => requireClaimStillHeld(claimsAt(root), "bob", envOf("%3", "bob"))).not.toThrow();
    claim("bob", "%8");
    expect(thrown(() => requireClaimStillHeld(claimsAt(root), "bob", envOf("%3", "bob"))).code).toBe("name_mismatch");
  });
});

describe("claimFor: what a registration records", () => {
  test("the server, when AGENTMAIL_NAME names the caller and its window alone carries the name", () => {
    expect(claimFor(envOf("%3", "bob"), "bob", false, 1)).toEqual(HERE);
  });

  test("the server for a claim already held here, whatever the windows are called now", () => {
    expect(claimFor(envOf("%3", "bob"), "bob", true, 0)).toEqual(HERE);
  });

  test("nothing without the name, with another name, or when two windows carry it", () => {
    expect(claimFor(envOf("%3"), "bob", false, 1)).toBeUndefined();
    expect(claimFor(envOf("%3", "alice"), "bob", false, 1)).toBeUndefined();
    expect(claimFor(envOf("%3", "bob"), "bob", false, 2)).toBeUndefined();
    expect(claimFor({ ...envOf("%3", "bob"), TMUX: undefined }, "bob", true, 1)).toBeUndefined();
  });
});

describe("writeRegistration", () => {
  test("records the claim beside the status, and keeps the status's own fields", async () => {
    const record = await writeRegistration(root, { name: "bob", status: "ready", pane: "%3", claim: HERE });
    expect(record).toMatchObject({ name: "bob", status: "ready", pane: "%3", claim_server: SERVER, claim_host: HOSTNAME });
    expect(readClaim(root, "bob")).toEqual({ name: "bob", pane: "%3", server: SERVER, host: HOSTNAME, active: true });
    await writeRegistration(root, { name: "bob", status: "work", pane: "%3", claim: HERE });
    expect(readStatus(root, "bob")).toMatchObject({ status: "work", pane: "%3", claim_server: SERVER });
    // A registration without the claim (say, from a shell without AGENTMAIL_NAME) drops it.
    await writeRegistration(root, { name: "bob", status: "work", pane: "%3" });
    expect(readClaim(root, "bob")).toBeNull();
  });

  test("moving a claim waits for the name's receive lock; keeping it does not", async () => {
    await writeRegistration(root, { name: "bob", status: "ready", pane: "%3", claim: HERE });
    const lock = receiveLockPathOf(mailboxPath(root, "bob"));
    // A receive in progress: the lock names this (live) test process.
    symlinkSync(`am1:${process.pid}:-:00000000:feedfacefeed`, lock);
    const saved = process.env.AGENTMAIL_LOCK_TIMEOUT;
    process.env.AGENTMAIL_LOCK_TIMEOUT = "0.2";
    try {
      await writeRegistration(root, { name: "bob", status: "work", pane: "%3", claim: HERE });
      expect((await rejected(writeRegistration(root, { name: "bob", status: "ready", pane: "%8", claim: HERE }))).code).toBe("locked");
      expect((await rejected(writeRegistration(root, { name: "bob", status: "ready", pane: "%3" }))).code).toBe("locked");
      expect(readClaim(root, "bob")?.pane).toBe("%3");
      unlinkSync(lock);
      await writeRegistration(root, { name: "bob", status: "ready", pane: "%8", claim: HERE });
      expect(readClaim(root, "bob")?.pane).toBe("%8");
    } finally {
      if (saved === undefined) delete process.env.AGENTMAIL_LOCK_TIMEOUT;
      else process.env.AGENTMAIL_LOCK_TIMEOUT = saved;
    }
    expect(readdirSync(root)).not.toContain("bob.jsonl.rlock");
  });
});

describe("the fast paths make no tmux call", () => {
  test("whoIsCalling(receive) names a caller holding its claim, from the store alone", async () => {
    claim("bob", "%3");
    const receiver = await whoIsCalling(placeOf(envOf("%3", "bob")), "receive");
    expect(receiver.caller).toEqual({ name: "bob", paneId: "%3" });
    expect(receiver.store.location).toBe(root);
  });

  test("a name that is not this pane's claim asks tmux (which is not there here)", async () => {
    claim("bob", "%3");
    expect((await rejected(whoIsCalling(placeOf(envOf("%4", "bob")), "receive"))).code).toBe("not_in_tmux");
  });

  test("send from a claim to a claim is stored with the sender's name; an unclaimed recipient asks tmux", async () => {
    claim("alice", "%1");
    claim("bob", "%3");
    const sent = await sendMail(placeOf(envOf("%1", "alice")), "bob", "hello from the fast lane");
    expect(readFileSync(mailboxPath(root, "bob"), "utf8")).toContain(`"id":"${sent.id}","from":"alice","to":"bob"`);
    expect((await rejected(sendMail(placeOf(envOf("%1", "alice")), "carol", "hi"))).code).toBe("not_in_tmux");
    expect(existsSync(mailboxPath(root, "carol"))).toBe(false);
  });

  test(".agentmailignore hides a claimed recipient from the fast lane too", async () => {
    const repo = mkdtempSync(join(tmpdir(), "agentmail-identity-repo-"));
    try {
      Bun.spawnSync(["git", "init", "-q", repo]);
      writeFileSync(join(repo, ".agentmailignore"), "bob\n");
      claim("alice", "%1");
      claim("bob", "%3");
      const place = { cwd: repo, env: envOf("%1", "alice") };
      expect((await rejected(sendMail(place, "bob", "hi"))).code).toBe("not_in_tmux");
      expect(existsSync(mailboxPath(root, "bob"))).toBe(false);
    } finally {
      rmSync(repo, { recursive: true, force: true });
    }
  });

  test("receive through a claim takes the oldest message, and a claim moved under the lock takes nothing", async () => {
    claim("bob", "%3");
    mkdirSync(root, { recursive: true });
    await appendMessage(root, createMessage("alice", "bob", "first"));
    await appendMessage(root, createMessage("alice", "bob", "second"));
    const receiver = await whoIsCalling(placeOf(envOf("%3", "bob")), "receive");
    const shown: string[] = [];
    const take = () =>
      receiveMail(receiver.store, receiver.caller.name, (message) => void shown.push(message.message), {
        onSkip: () => {},
        confirm: receiver.confirm,
      });
    expect((await take())?.message).toBe("first");
    claim("bob", "%8");
    expect((await rejected(take())).code).toBe("name_mismatch");
    expect(shown).toEqual(["first"]);
    expect((await takeOldestUnread(root, "bob", () => {}))?.message).toBe("second");
  });
});

describe("claimedRecipients: who a send may address without tmux", () => {
  test("agents holding a live claim of this server, the caller's own included; not groups, roles, @all or others", () => {
    claim("alice", "%1");
    claim("bob", "%3");
    claim("carol", "%4", null);
    const addresses = [
      { kind: "agent", name: "bob" },
      { kind: "agent", name: "alice" },
      { kind: "agent", name: "carol" },
      { kind: "all" },
      { kind: "group", name: "bob" },
      { kind: "role", role: "triage" },
    ] as const;
    expect(claimedRecipients(claimsAt(root), null, addresses, envOf("%1", "alice"), "alice")).toEqual([
      { name: "bob", you: false, auto: false },
      { name: "alice", you: true, auto: false },
    ]);
  });

  test("a list that is not all claimed agents is sent the tmux way: @all, or a name nobody claimed", async () => {
    claim("alice", "%1");
    claim("bob", "%3");
    for (const recipients of [["bob", "carol"], ["@all"], ["bob", "role:triage"]]) {
      expect((await rejected(sendMail(placeOf(envOf("%1", "alice")), recipients, "hi"))).code).toBe("not_in_tmux");
    }
    expect(existsSync(mailboxPath(root, "bob"))).toBe(false);
  });

  test("a list of claimed agents gets one copy each, with one id, and none for the sender", async () => {
    claim("alice", "%1");
    claim("bob", "%3");
    claim("carol", "%4");
    const sent = await sendMail(placeOf(envOf("%1", "alice")), ["bob", "carol", "alice", "bob"], "standup in 5");
    for (const name of ["bob", "carol"]) expect(readFileSync(mailboxPath(root, name), "utf8")).toContain(`"id":"${sent.id}"`);
    expect(existsSync(mailboxPath(root, "alice"))).toBe(false);
  });
});
