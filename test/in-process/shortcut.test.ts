/**
 * The plain forms of send and receive skip the command tree (src/shortcut.ts): exactly those forms, and they do
 * what the full parse does. Run here as named agents holding their claims (no tmux needed), each form both ways.
 */
import { afterEach, beforeEach, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setSink } from "../../src/output/streams.ts";
import { runShortcut, shortcutFor } from "../../src/shortcut.ts";
import { HOSTNAME } from "../../src/store/host.ts";
import { writeStatus } from "../../src/store/status.ts";
import { runInProcess, type Captured } from "../support/in-process.ts";

const SERVER = "/nonexistent/agentmail-shortcut-socket,4242";
let root: string;
beforeEach(() => {
  root = mkdtempSync(join(tmpdir(), "agentmail-shortcut-"));
  for (const [name, pane] of [
    ["alice", "%1"],
    ["bob", "%2"],
  ] as const) {
    writeStatus(root, name, "ready", pane, new Date(), undefined, { server: SERVER, host: HOSTNAME });
  }
});
afterEach(() => rmSync(root, { recursive: true, force: true }));

const envOf = (name: string, pane: string) => ({ TMUX: `${SERVER},0`, TMUX_PANE: pane, AGENTMAIL_DIR: root, AGENTMAIL_NAME: name });

/** Runs argv through the shortcut, in the named agent's environment, capturing its output. */
async function viaShortcut(argv: string[], env: Record<string, string>): Promise<Captured> {
  const shortcut = shortcutFor(argv);
  if (!shortcut) throw new Error(`no shortcut for ${argv.join(" ")}`);
  const saved = { ...process.env };
  let stdout = "";
  let stderr = "";
  setSink({ stdout: (text) => void (stdout += text), stderr: (text) => void (stderr += text) });
  Object.assign(process.env, env);
  try {
    return { code: await runShortcut(shortcut, argv), stdout, stderr };
  } finally {
    setSink(null);
    for (const key of Object.keys(process.env)) if (!(key in saved)) delete process.env[key];
    Object.assign(process.env, saved);
  }
}

/** Output with ids and times made comparable between two runs. */
const normal = (result: Captured) => ({
  ...result,
  stdout: result.stdout
    .replace(/^[A-Za-z0-9]{8}\n$/, "<id>\n")
    .replace(/"(id|created_at|read_at)":"[^"]*"/g, '"$1":"…"')
    .replace(/ID: \S+/g, "ID: …"),
  stderr: result.stderr.replace(/ID: \S+/g, "ID: …"),
});

describe("shortcutFor", () => {
  test("takes receive, receive --hook, receive --json and send with two plain words", () => {
    for (const argv of [["receive"], ["receive", "--hook"], ["receive", "--json"], ["send", "bob", "hi there"]]) {
      expect({ argv, taken: shortcutFor(argv) !== null }).toEqual({ argv, taken: true });
    }
  });

  test("leaves every other form to the command tree", () => {
    const others = [
      ["receive", "--wait"],
      ["receive", "--peek"],
      ["receive", "--hook", "--json"],
      ["receive", "--help"],
      ["send", "bob"],
      ["send", "bob", ""],
      ["send", "bob", "-"],
      ["send", "-r", "bob", "hi"],
      ["send", "bob", "hi", "there"],
      ["send", "bob", "--json"],
      ["send", "--", "bob"],
      ["inbox"],
      [],
    ];
    for (const argv of others) expect({ argv, taken: shortcutFor(argv) !== null }).toEqual({ argv, taken: false });
  });
});

describe("each shortcut does what the command tree does", () => {
  test("send, receive, receive --json and receive --hook: the same output and exit code both ways", async () => {
    const alice = envOf("alice", "%1");
    const bob = envOf("bob", "%2");
    for (const path of ["shortcut", "tree"] as const) {
      const run = (argv: string[], env: Record<string, string>) =>
        path === "shortcut" ? viaShortcut(argv, env) : runInProcess(argv, { env });
      const results = [
        await run(["send", "bob", "one"], alice),
        await run(["send", "bob", "two"], alice),
        await run(["send", "bob", "three"], alice),
        await run(["receive"], bob),
        await run(["receive", "--json"], bob),
        await run(["receive", "--hook"], bob),
        await run(["receive"], bob),
        await run(["receive", "--hook"], bob),
      ].map(normal);
      expect(results.map((result) => result.code)).toEqual([0, 0, 0, 0, 0, 2, 0, 0]);
      expect(results[3]!.stdout).toContain("one");
      expect(results[5]!.stderr).toContain("three");
      expect(results[6]!.stdout).toBe("No unread messages\n");
      if (path === "tree") expect(results).toEqual(shortcutResults);
      else shortcutResults = results;
    }
  });

  test("a failure is reported as the command tree reports it: one error line, or a JSON error with --json", async () => {
    const impostor = { ...envOf("bob", "%1"), TMUX: "/nonexistent/other-socket,1,0" };
    const viaTree = await runInProcess(["receive", "--json"], { env: impostor });
    const viaShort = await viaShortcut(["receive", "--json"], impostor);
    expect(viaShort).toEqual(viaTree);
    expect(JSON.parse(viaShort.stdout).error.code).toBe("not_in_tmux");
    const plainTree = await runInProcess(["send", "carol", "hi"], { env: impostor });
    expect(await viaShortcut(["send", "carol", "hi"], impostor)).toEqual(plainTree);
    expect(plainTree.code).toBe(2);
  });
});

let shortcutResults: Captured[] = [];
