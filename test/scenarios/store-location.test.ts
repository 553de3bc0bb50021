/**
 * The store location as a user can get it wrong, against the compiled binary: a GIT_DIR or GIT_COMMON_DIR that is
 * not a git directory, a relative AGENTMAIL_DIR, AGENTMAIL_DIR=/, a symlinked store, a store holding someone else's
 * files. Each fails with exit 1 and writes nothing anywhere; a hook stays silent.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { existsSync, mkdirSync, readdirSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { am, expectError, expectSent, shown, tree } from "../support/e2e.ts";
import { serverWithFreshRepos } from "../support/fresh-repos.ts";

/** A window name no other test uses, so the mailbox a broken build might write into `/` is ours to remove. */
const PROBE = `amprobe${process.pid}`;

const world = serverWithFreshRepos("agentmail-location-", ["alice", PROBE]);

afterAll(() => {
  for (const suffix of ["", ".lock", ".cursor"]) rmSync(`/${PROBE}.jsonl${suffix}`, { force: true });
});

const send = (extra: Record<string, string>, cwd = world.repo.dir) =>
  am(["send", PROBE, "hi"], { env: { ...world.server.agent("alice").env, ...extra }, cwd });
const receive = (extra: Record<string, string>, args: string[] = [], cwd = world.repo.dir) =>
  am(["receive", ...args], { env: { ...world.server.agent(PROBE).env, ...extra }, cwd });

function fakeEtc(): string {
  const etc = join(world.scratch, `etc-${Math.random().toString(36).slice(2)}`);
  mkdirSync(etc);
  writeFileSync(join(etc, "passwd"), "root:x:0:0::/root:/bin/sh\n");
  return etc;
}

describe("git directories", () => {
  test("GIT_DIR naming a directory that is not a git dir: exit 1 as git would say it, nothing written there", async () => {
    const etc = fakeEtc();
    const error = expectError(await send({ GIT_DIR: etc }), 1);
    const fix = "point GIT_DIR at a repository's .git directory, or unset it";
    expect(error).toBe(`error: not a git repository: '${etc}' (from GIT_DIR); ${fix}\n`);
    expect(readdirSync(etc)).toEqual(["passwd"]);
    expect(await receive({ GIT_DIR: etc }, ["--hook"])).toMatchObject({ code: 0, stdout: "", stderr: "" });
  });

  test("GIT_DIR or GIT_COMMON_DIR naming nothing: exit 1, and the directory is not created", async () => {
    const missing = join(world.scratch, "nonexistent");
    expectError(await send({ GIT_DIR: missing }), 1);
    expect(existsSync(missing)).toBe(false);
    const common = join(world.scratch, "x");
    expect(expectError(await send({ GIT_COMMON_DIR: common }), 1)).toContain("GIT_COMMON_DIR");
    expect(existsSync(common)).toBe(false);
    expect(tree(world.repo.dir).filter((path) => path.startsWith(".git/mail"))).toEqual([]);
  });
});

describe("AGENTMAIL_DIR", () => {
  test("a relative one is the same store from every subdirectory: the one at the repository's top level", async () => {
    const deep = join(world.repo.dir, "src", "deep");
    mkdirSync(deep, { recursive: true });
    const id = expectSent(await send({ AGENTMAIL_DIR: "team-mail" }, deep));
    expect(existsSync(join(world.repo.dir, "team-mail", `${PROBE}.jsonl`))).toBe(true);
    expect(existsSync(join(deep, "team-mail"))).toBe(false);
    expect((await receive({ AGENTMAIL_DIR: "team-mail" }, [], join(world.repo.dir, "src"))).stdout).toBe(shown("alice", id, "hi"));
  });

  test("a relative one outside a repository: exit 1, nothing written", async () => {
    const outside = join(world.scratch, `outside-${Math.random().toString(36).slice(2)}`);
    mkdirSync(outside);
    expect(expectError(await send({ AGENTMAIL_DIR: "mail" }, outside), 1)).toContain("AGENTMAIL_DIR");
    expect(readdirSync(outside)).toEqual([]);
  });

  test("AGENTMAIL_DIR=/ is refused and nothing is written into /", async () => {
    expect(expectError(await send({ AGENTMAIL_DIR: "/" }), 1)).toContain("/");
    expect(existsSync(`/${PROBE}.jsonl`)).toBe(false);
  });

  test("a directory holding other files is refused, naming one of them", async () => {
    const etc = fakeEtc();
    expect(expectError(await send({ AGENTMAIL_DIR: etc }), 1)).toContain(`${etc} holds "passwd"`);
    expect(readdirSync(etc)).toEqual(["passwd"]);
  });
});

describe("a symlinked store", () => {
  test("is refused, never followed: the link's target stays empty", async () => {
    const target = join(world.scratch, `target-${Math.random().toString(36).slice(2)}`);
    mkdirSync(target);
    symlinkSync(target, world.repo.mailDir);
    expect(expectError(await send({}), 1)).toContain(`${world.repo.mailDir} is a symlink`);
    expect(readdirSync(target)).toEqual([]);
    expect(await receive({}, ["--hook"])).toMatchObject({ code: 0, stdout: "", stderr: "" });
  });
});
