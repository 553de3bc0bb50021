/**
 * The marks of a person's views on this machine (src/room/person-views.ts) and the private directory they live in
 * (src/room/private-dir.ts): the last view to leave is told it is the last; a killed view's mark counts for nothing.
 */
import { afterEach, beforeEach, expect, test } from "bun:test";
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { enterView } from "../../../src/room/person-views.ts";
import { freshPrivateDir, privateDir } from "../../../src/room/private-dir.ts";

let runtime: string;
let env: Record<string, string>;
beforeEach(() => {
  runtime = mkdtempSync(join(tmpdir(), "agentmail-runtime-"));
  env = { XDG_RUNTIME_DIR: runtime };
});
afterEach(() => rmSync(runtime, { recursive: true, force: true }));

test("two views of one person: the first to leave is not the last; the last leaves nothing behind", () => {
  const first = enterView(env, "file /repo/.git/mail", "ana");
  const second = enterView(env, "file /repo/.git/mail", "ana");
  const other = enterView(env, "file /other/.git/mail", "ana");
  expect(first.leave()).toBe(false);
  expect(second.leave()).toBe(true);
  expect(other.leave()).toBe(true);
  expect(readdirSync(runtime)).toEqual([]);
});

test("a mark whose process is gone (a killed view) counts for nothing and is cleared", () => {
  const view = enterView(env, "store", "ana");
  const dir = join(runtime, `agentmail-views-${process.getuid!()}`);
  const mine = readdirSync(dir)[0]!;
  const [key] = mine.split(".");
  // A pid no process has: the view that left it was killed.
  writeFileSync(join(dir, `${key}.2147483646.1`), "");
  expect(view.leave()).toBe(true);
  expect(existsSync(dir)).toBe(false);
});

test("the private directory is the user's alone: one others may enter is not used, and then every view counts as the last", () => {
  const dir = join(runtime, `agentmail-views-${process.getuid!()}`);
  mkdirSync(dir);
  chmodSync(dir, 0o755);
  expect(privateDir(env, "agentmail-views")).toBeNull();
  const view = enterView(env, "store", "ana");
  expect(readdirSync(dir)).toEqual([]);
  expect(view.leave()).toBe(true);
  const fresh = freshPrivateDir(env, "agentmail-web-");
  expect(fresh.startsWith(runtime)).toBe(true);
  expect(statSync(fresh).mode & 0o777).toBe(0o700);
  // Without a runtime directory: the temp dir.
  const temp = freshPrivateDir({ XDG_RUNTIME_DIR: join(runtime, "missing") }, "agentmail-web-");
  expect(temp.startsWith(tmpdir())).toBe(true);
  rmSync(temp, { recursive: true });
});
