/**
 * The trust Codex CLI needs before it runs agentmail's hooks: Codex's hash of each hook (the expected values are
 * what Codex CLI 0.169.0's `app-server` hooks/list answered for these hooks), the keys by position in hooks.json,
 * the marked trust block in the user's config.toml (written, replaced, refused, removed), and the report doctor reads.
 */
import { describe, expect, test } from "bun:test";
import { configEdits, hookPlan } from "../../../src/hooks/settings-edits.ts";
import {
  agentmailCodexHooks,
  codexHookHash,
  codexTrustReport,
  installCodexTrust,
  uninstallCodexTrust,
  type TrustRequest,
} from "../../../src/hooks/codex-trust.ts";

const HOOKS = "/repo/.codex/hooks.json";
const CONFIG = "/home/u/.codex/config.toml";
const where = { projectRoot: "/repo", home: "/home/u", env: {} };

/** hooks.json as `hooks install codex` writes it into an empty project. */
function installedHooks(binary = "agentmail", before = ""): string {
  const [, hooks] = configEdits("codex", "project", where, binary);
  return hooks!.install(before);
}

const request = (hooksText = installedHooks()): TrustRequest => ({
  hooksPath: HOOKS,
  hooks: agentmailCodexHooks(HOOKS, hooksText),
  projectRoot: "/repo",
});

describe("Codex's hook hash", () => {
  test("matches what Codex CLI 0.169.0 reports, with each event's effective timeout", () => {
    expect(codexHookHash("SessionStart", { type: "command", command: "agentmail status ready" })).toBe(
      "sha256:73c2be4513c0c2b5649d7e95cc4bcac9b638132c3ccf4c75d73966ef67026a98",
    );
    expect(codexHookHash("SessionStart", { type: "command", command: "agentmail onboard" })).toBe(
      "sha256:9a624c585df959005c39e07dec21f2acd4b80960e88a3a534df49bfaf45b37b5",
    );
    expect(codexHookHash("UserPromptSubmit", { type: "command", command: "agentmail status work" })).toBe(
      "sha256:45e61aafe0afd3f346e83a95dc592ac89e3d7632d5352e82abd95a13b3b7aa7c",
    );
    const delivery = "agentmail receive --hook && agentmail status ready";
    expect(codexHookHash("Stop", { type: "command", command: delivery })).toBe(
      "sha256:0419a78f0b0b311efe07de1bbfcc61089bb7d3577254ad32c706e9d417465a82",
    );
    expect(codexHookHash("Stop", { type: "command", command: delivery, timeout: 30 })).toBe(
      "sha256:a05140e16087a616843e86bd54815fef88fc15bbe8d0f1b4274c1c4b6de37d6f",
    );
    // A session-end hook runs for 1 s unless told, and for at most 3 s.
    expect(codexHookHash("SessionEnd", { type: "command", command: "agentmail status offline" })).toBe(
      "sha256:9741e4b27077722782b25d678d9378d131d163d7eadcbe89f03bbbb22eb9c103",
    );
    expect(codexHookHash("SessionEnd", { type: "command", command: "agentmail status offline", timeout: 10 })).toBe(
      "sha256:2d67ba22791d9850f04ce34de910ac60b991ca266b1175f86e7e0a5aeb7b94d6",
    );
    // The pre-edit guard's matcher is part of what Codex hashes (PreToolUse applies it).
    expect(codexHookHash("PreToolUse", { type: "command", command: "agentmail guard codex" }, "apply_patch|Edit|Write")).toBe(
      "sha256:c760517462fd0427e45b144e62efef2ee7c9a0b1a6c13943b7509bd8b57c52f8",
    );
  });

  test("async, a status message and a matcher are part of what is trusted", () => {
    const plain = codexHookHash("SessionStart", { command: "agentmail onboard" });
    expect(codexHookHash("SessionStart", { command: "agentmail onboard", async: true })).not.toBe(plain);
    expect(codexHookHash("SessionStart", { command: "agentmail onboard", statusMessage: "x" })).not.toBe(plain);
    expect(codexHookHash("SessionStart", { command: "agentmail onboard" }, "startup")).not.toBe(plain);
  });
});

describe("agentmail's hooks in hooks.json", () => {
  test("one key per hook: the file, Codex's event label, the group and the handler position", () => {
    expect(request().hooks.map((hook) => hook.key.slice(HOOKS.length + 1))).toEqual([
      "session_start:0:0",
      "session_start:0:1",
      "user_prompt_submit:0:0",
      "stop:0:0",
      "pre_tool_use:0:0",
      "session_end:0:0",
    ]);
    expect(request().hooks[0]!.command).toBe("agentmail status ready");
  });

  test("other tools' hooks are not trusted, but they move ours to a later group", () => {
    const theirs = JSON.stringify({
      hooks: {
        Stop: [{ hooks: [{ type: "command", command: "notify-send done" }] }],
        PostToolUse: [{ hooks: [{ type: "command", command: "agentmail status work" }] }],
      },
    });
    const hooks = agentmailCodexHooks(HOOKS, installedHooks("agentmail", theirs));
    expect(hooks.map((hook) => hook.key.slice(HOOKS.length + 1))).toContain("stop:1:0");
    expect(hooks.some((hook) => hook.command === "notify-send done")).toBe(false);
    expect(hooks.some((hook) => hook.key.includes("post_tool_use"))).toBe(false);
  });

  test("a binary given by path is recognised; a file that is not JSON holds none", () => {
    const hooks = agentmailCodexHooks(HOOKS, installedHooks("/opt/my tools/agentmail"), "/opt/my tools/agentmail");
    expect(hooks[0]!.command).toBe("'/opt/my tools/agentmail' status ready");
    expect(agentmailCodexHooks(HOOKS, "not json")).toEqual([]);
    expect(agentmailCodexHooks(HOOKS, '{"hooks": {"Stop": {}}}')).toEqual([]);
  });
});

describe("the trust block in the user's config.toml", () => {
  const USER = 'model = "o3"\n\n[model_providers.mock]\nname = "mock"\n';

  test("trusts the project and every hook, after the user's settings; installing again changes nothing", () => {
    const trusted = installCodexTrust(USER, request(), CONFIG);
    expect(trusted.startsWith(USER + "\n# >>> agentmail trust for /repo/.codex/hooks.json:")).toBe(true);
    const parsed = Bun.TOML.parse(trusted) as any;
    expect(parsed.model_providers).toEqual({ mock: { name: "mock" } });
    expect(parsed.projects).toEqual({ "/repo": { trust_level: "trusted" } });
    expect(Object.keys(parsed.hooks.state)).toHaveLength(6);
    expect(parsed.hooks.state[`${HOOKS}:stop:0:0`]).toEqual({ trusted_hash: request().hooks[3]!.hash });
    expect(installCodexTrust(trusted, request(), CONFIG)).toBe(trusted);
    expect(uninstallCodexTrust(trusted, HOOKS, CONFIG)).toBe(USER);
    expect(uninstallCodexTrust(USER, HOOKS, CONFIG)).toBe(USER);
  });

  test("a changed hook gets a new hash in place of the old block; a user install trusts no project", () => {
    const old = installCodexTrust("", request(), CONFIG);
    const moved = installCodexTrust(old + "\n[later]\nx = 1\n", request(installedHooks("/opt/agentmail")), CONFIG);
    expect(moved.indexOf("[later]")).toBeGreaterThan(moved.indexOf("# <<< agentmail trust <<<"));
    expect((Bun.TOML.parse(moved) as any).later).toEqual({ x: 1 });
    expect(moved).not.toContain(request().hooks[0]!.hash);
    const user = installCodexTrust("", { ...request(), projectRoot: null }, CONFIG);
    expect(user).not.toContain("[projects.");
  });

  test("what the user already trusts is not written again; with everything trusted there is no block", () => {
    const hooks = request().hooks;
    const first = `[hooks.state.${JSON.stringify(hooks[0]!.key)}]\ntrusted_hash = "${hooks[0]!.hash}"\n`;
    const mine = `[projects."/repo"]\ntrust_level = "trusted"\n\n${first}`;
    const trusted = installCodexTrust(mine, request(), CONFIG);
    expect(trusted.match(/\[projects\./g)).toHaveLength(1);
    expect(trusted.split(hooks[0]!.key)).toHaveLength(2);
    const all = hooks.map((hook) => `[hooks.state.${JSON.stringify(hook.key)}]\ntrusted_hash = "${hook.hash}"\n`).join("");
    const everything = `[projects."/repo"]\ntrust_level = "trusted"\n${all}`;
    expect(installCodexTrust(everything, request(), CONFIG)).toBe(everything);
  });

  test("refuses, changing nothing, a project the user marked untrusted, a hook state of their own, or a broken file", () => {
    expect(() => installCodexTrust('[projects."/repo"]\ntrust_level = "untrusted"\n', request(), CONFIG)).toThrow(
      'sets trust_level = "untrusted" for /repo, so Codex ignores its .codex/',
    );
    const key = request().hooks[3]!.key;
    expect(() => installCodexTrust(`[hooks.state.${JSON.stringify(key)}]\nenabled = false\n`, request(), CONFIG)).toThrow(
      `already has [hooks.state.${JSON.stringify(key)}]`,
    );
    expect(() => installCodexTrust("model = \n", request(), CONFIG)).toThrow(`cannot parse ${CONFIG} as TOML`);
    const damaged = installCodexTrust("", request(), CONFIG).replace("# <<< agentmail trust <<<", "");
    expect(() => installCodexTrust(damaged, request(), CONFIG)).toThrow("damaged agentmail trust block");
    expect(() => uninstallCodexTrust(damaged, HOOKS, CONFIG)).toThrow("damaged agentmail trust block");
  });

  test("refuses a file where the block would capture keys written after it, or whose tables would collide", () => {
    // hooks = inline table: a [hooks.state…] table cannot extend it.
    expect(() => installCodexTrust("hooks = { x = 1 }\n", request(), CONFIG)).toThrow(/cannot parse .* after the edit/);
  });
});

describe("install and uninstall through configEdits", () => {
  test("--trust adds the user's config.toml; for --user it is the same file as the server's, edited once", () => {
    expect(configEdits("codex", "project", where, "agentmail", { trust: true }).map((edit) => [edit.path, edit.holds])).toEqual([
      ["/repo/.codex/config.toml", "MCP server"],
      ["/repo/.codex/hooks.json", "hooks"],
      [CONFIG, "hook trust"],
    ]);
    const [toml, hooks] = configEdits("codex", "user", where, "agentmail", { trust: true });
    expect([toml!.path, toml!.holds]).toEqual([CONFIG, "MCP server and hook trust"]);
    const both = toml!.install("", new Map([[hooks!.path, ""]]));
    const parsed = Bun.TOML.parse(both) as any;
    expect(parsed.mcp_servers.agentmail.command).toBe("agentmail");
    expect(Object.keys(parsed.hooks.state).every((key) => key.startsWith("/home/u/.codex/hooks.json:"))).toBe(true);
    expect(parsed.projects).toBeUndefined();
    expect(toml!.uninstall(both)).toBe("");
    expect(hookPlan("codex", "agentmail")).toHaveLength(5);
  });
});

describe("the report doctor reads", () => {
  test("lists hooks Codex would skip: never trusted, changed since trusted, or disabled; and whether the project is trusted", () => {
    const hooks = request().hooks;
    expect(codexTrustReport("", hooks, "/repo")).toEqual({
      projectTrusted: false,
      untrusted: hooks.map((hook) => ({ key: hook.key, command: hook.command, status: "untrusted" })),
    });
    const trusted = installCodexTrust("", request(), CONFIG);
    expect(codexTrustReport(trusted, hooks, "/repo")).toEqual({ projectTrusted: true, untrusted: [] });
    const changed = trusted.replace(hooks[0]!.hash, "sha256:old").replace(`trusted_hash = "${hooks[1]!.hash}"`, "enabled = false");
    expect(codexTrustReport(changed, hooks, null)).toEqual({
      projectTrusted: null,
      untrusted: [
        { key: hooks[0]!.key, command: hooks[0]!.command, status: "modified" },
        { key: hooks[1]!.key, command: hooks[1]!.command, status: "disabled" },
      ],
    });
    expect(codexTrustReport("not = toml = at all", hooks, "/repo").untrusted).toHaveLength(6);
  });
});
