/**
 * Codex CLI, headless (`codex exec --skip-git-repo-check …`), against the mock OpenAI Responses API. The user's
 * ~/.codex/config.toml names the mock as the model provider; `hooks install codex --project --trust` adds the trust
 * Codex needs before it runs a project's hooks (it skips untrusted hooks without a word).
 */
import { afterEach, beforeEach, describe, expect, test } from "bun:test";
import { mkdirSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { readText } from "../support/e2e.ts";
import { codexHooksList, type ListedHook } from "./codex-app-server.ts";
import { ensureAgent } from "./install-agents.ts";
import { writeCodexConfig } from "./launch.ts";
import { describeAgent } from "./scenarios.ts";
import { World } from "./world.ts";

describeAgent({
  agent: "codex",
  installArgs: ["--trust"],
  configure: (world) => {
    writeCodexConfig(world, "read-only");
    return { OPENAI_API_KEY: "dummy" };
  },
  command: (binary, prompt) => [binary, "exec", "--skip-git-repo-check", prompt],
  sessionEnd: true,
  // The final message on stdout, and no error on the way.
  succeeded: (run) => run.stdout.trim() !== "" && !/^ERROR/m.test(run.stderr),
});

describe("Codex CLI's own view of the hooks agentmail trusts (codex app-server, hooks/list)", () => {
  let world: World;
  let codex: string;
  beforeEach(() => {
    world = new World();
    codex = ensureAgent("codex").binary;
  });
  afterEach(() => world.stop());

  const listed = () => codexHooksList(codex, world, { OPENAI_API_KEY: "dummy" });
  const ours = (hooks: ListedHook[]) => hooks.filter((hook) => hook.command.includes("agentmail"));
  /** The trust agentmail wrote into the user's config.toml, by hook key. */
  const written = () => {
    const config = Bun.TOML.parse(readText(join(world.home, ".codex", "config.toml"))) as {
      hooks?: { state?: Record<string, { trusted_hash: string }> };
    };
    return new Map(Object.entries(config.hooks?.state ?? {}).map(([key, state]) => [key, state.trusted_hash]));
  };

  test("after --trust, Codex lists every agentmail hook as trusted, at the hash agentmail wrote; others' stay untrusted", async () => {
    const hooksPath = join(world.repo.dir, ".codex", "hooks.json");
    mkdirSync(dirname(hooksPath), { recursive: true });
    writeFileSync(hooksPath, JSON.stringify({ hooks: { Stop: [{ hooks: [{ type: "command", command: "echo theirs" }] }] } }));
    const binary = join(world.home, "my tools", "agentmail");
    const installed = await world.agentmail(["hooks", "install", "codex", "--trust", "--binary", binary]);
    expect(installed.code).toBe(0);
    const hooks = await listed();
    expect(ours(hooks).map((hook) => [hook.eventName, hook.trustStatus])).toEqual([
      ["preToolUse", "trusted"],
      ["postToolUse", "trusted"],
      ["sessionStart", "trusted"],
      ["sessionStart", "trusted"],
      ["sessionEnd", "trusted"],
      ["userPromptSubmit", "trusted"],
      ["stop", "trusted"],
    ]);
    expect(written()).toEqual(new Map(ours(hooks).map((hook) => [hook.key, hook.currentHash])));
    // Each runs the binary given: first, or, for the Stop hook, after its doorbell's look in `sh -c`.
    const runsBinary = (command: string) =>
      command.startsWith(`'${binary}' `) || (command.startsWith("sh -c '") && command.endsWith(` '${binary}'`));
    expect(ours(hooks).every((hook) => hook.key.startsWith(`${hooksPath}:`) && runsBinary(hook.command))).toBe(true);
    expect(hooks.find((hook) => hook.command === "echo theirs")!.trustStatus).toBe("untrusted");
  });

  test("a user install with --trust is trusted too; uninstall takes the trust out; without --trust every hook is untrusted", async () => {
    expect((await world.agentmail(["hooks", "install", "codex", "--user", "--trust"])).code).toBe(0);
    expect(ours(await listed()).map((hook) => hook.trustStatus)).toEqual(Array(7).fill("trusted"));
    expect((await world.agentmail(["hooks", "uninstall", "codex", "--user"])).code).toBe(0);
    expect(written()).toEqual(new Map());
    const plain = await world.agentmail(["hooks", "install", "codex", "--user"]);
    expect(plain.stdout).toContain("run 'agentmail hooks install codex --user --trust' to trust them");
    expect(ours(await listed()).map((hook) => hook.trustStatus)).toEqual(Array(7).fill("untrusted"));
  });
});
