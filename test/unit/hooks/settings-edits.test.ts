/**
 * What `hooks install` writes, as pure text → text functions: install → install again → uninstall round trips on
 * sample settings files of each agent (with comments, unrelated settings, hooks of other tools, and files that
 * cannot be parsed), the Codex TOML block, the hook-command recogniser, the dry-run diff, and the Claude Code plugin.
 */
import { describe, expect, test } from "bun:test";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { configEdits, hookPlan, mcpEntry, type ConfigEdit } from "../../../src/hooks/settings-edits.ts";
import { AGENTS, type AgentName, type Scope } from "../../../src/mail/agents.ts";
import { unifiedDiff } from "../../../src/hooks/diff.ts";
import { shellQuote } from "../../../src/mail/next-steps.ts";
import { hookCommand, isAgentmailHookCommand } from "../../../src/hooks/hook-commands.ts";
import { BLOCK_END, BLOCK_START, installCodexServer, uninstallCodexServer, type CodexServer } from "../../../src/hooks/toml-block.ts";
import { GUARDED_CLIS } from "../../../src/claims/guard.ts";

/** The Stop hook: the doorbell's look in `sh -c`, then agentmail (src/hooks/hook-commands.ts). */
const STOP_HOOK = hookCommand.delivery("agentmail");
const where = { projectRoot: "/repo", home: "/home/u", env: {} };
const edits = (agent: AgentName, scope: Scope = "project", binary = "agentmail") => configEdits(agent, scope, where, binary);

function roundTrip(edit: ConfigEdit, original: string): string {
  const installed = edit.install(original);
  expect(installed).not.toBe(original);
  expect(edit.install(installed)).toBe(installed);
  const removed = edit.uninstall(installed);
  expect(edit.uninstall(removed)).toBe(removed);
  return removed;
}

const CLAUDE_SETTINGS = `// Team settings: keep the hooks below.
{
    "model": "opus", // favourite
    "permissions": {"allow": ["Bash(npm test)"]},
    "hooks": {
        "Stop": [
            {
                "matcher": "",
                "hooks": [{"type": "command", "command": "notify-send done"}]
            }
        ]
    },
}
`;

const CLAUDE_JSON =
  JSON.stringify(
    { numStartups: 12, projects: { "/repo": { allowedTools: [] } }, mcpServers: { docs: { command: "npx", args: ["docs"] } } },
    null,
    2,
  ) + "\n";

const GEMINI_SETTINGS = `{
  "theme": "GitHub",
  "mcpServers": {
    "docs": {"command": "npx", "args": ["-y", "docs-mcp"]}
  },
  "hooks": {
    "disabled": ["secret-scanner"],
    "BeforeTool": [{"matcher": "run_shell_command", "hooks": [{"name": "secret-scanner", "type": "command", "command": "scan"}]}]
  }
}
`;

const CODEX_TOML = `# my codex config
model = "o3"
approval_policy = "on-request"

[mcp_servers.docs]
command = "npx"
args = ["-y", "docs-mcp"]

[profiles.fast]
model = "o4-mini"
`;

describe("paths per agent and scope", () => {
  test("project and user files", () => {
    expect(edits("claude").map((e) => [e.path, e.holds])).toEqual([
      ["/repo/.claude/settings.json", "hooks"],
      ["/repo/.mcp.json", "MCP server"],
    ]);
    expect(edits("claude", "user").map((e) => e.path)).toEqual(["/home/u/.claude/settings.json", "/home/u/.claude.json"]);
    expect(configEdits("claude", "user", { ...where, env: { CLAUDE_CONFIG_DIR: "/cfg" } }, "agentmail").map((e) => e.path)).toEqual([
      "/cfg/settings.json",
      "/cfg/.claude.json",
    ]);
    expect(edits("codex").map((e) => e.path)).toEqual(["/repo/.codex/config.toml", "/repo/.codex/hooks.json"]);
    expect(configEdits("codex", "user", { ...where, env: { CODEX_HOME: "/ch" } }, "agentmail").map((e) => e.path)).toEqual([
      "/ch/config.toml",
      "/ch/hooks.json",
    ]);
    expect(edits("gemini", "user").map((e) => [e.path, e.holds])).toEqual([["/home/u/.gemini/settings.json", "hooks and MCP server"]]);
  });
});

describe("Claude Code", () => {
  test("hooks merge next to other tools' hooks; uninstall gives back the original bytes", () => {
    const [settings] = edits("claude");
    const installed = settings!.install(CLAUDE_SETTINGS);
    const value = JSON.parse(
      installed
        .replace(/^\/\/.*$/m, "")
        .replace(/\/\/ favourite/, "")
        // Trailing commas before a line break only: the Stop hook holds `${TMUX#*,}`.
        .replace(/,(\s*\n\s*[}\]])/g, "$1"),
    );
    expect(value.model).toBe("opus");
    expect(value.hooks.Stop).toEqual([
      { matcher: "", hooks: [{ type: "command", command: "notify-send done" }] },
      { hooks: [{ type: "command", command: STOP_HOOK }] },
    ]);
    expect(value.hooks.SessionStart[0].hooks.map((h: { command: string }) => h.command)).toEqual([
      "agentmail status ready",
      "agentmail onboard",
    ]);
    expect(value.hooks.UserPromptSubmit[0].hooks[0].command).toBe("agentmail status work");
    expect(value.hooks.SessionEnd[0].hooks[0].command).toBe("agentmail status offline");
    expect(
      installed.startsWith(
        '// Team settings: keep the hooks below.\n{\n    "model": "opus", // favourite\n    "permissions": {"allow": ["Bash(npm test)"]},',
      ),
    ).toBe(true);
    expect(roundTrip(settings!, CLAUDE_SETTINGS)).toBe(CLAUDE_SETTINGS);
  });

  test("the MCP server joins the others in ~/.claude.json, and leaves them alone on uninstall", () => {
    const [, server] = edits("claude", "user");
    const installed = JSON.parse(server!.install(CLAUDE_JSON));
    expect(installed.mcpServers).toEqual({
      docs: { command: "npx", args: ["docs"] },
      agentmail: { type: "stdio", command: "agentmail", args: ["mcp"] },
    });
    expect(installed.numStartups).toBe(12);
    expect(roundTrip(server!, CLAUDE_JSON)).toBe(CLAUDE_JSON);
  });

  test("files that do not exist yet are created, and uninstall leaves an empty object", () => {
    for (const edit of edits("claude")) expect(JSON.parse(roundTrip(edit, ""))).toEqual({});
  });

  test("an older or hand-edited agentmail hook is replaced, not duplicated; a group shared with other hooks keeps them", () => {
    const [settings] = edits("claude");
    const old = JSON.stringify({
      hooks: {
        Stop: [
          {
            hooks: [
              { type: "command", command: "/usr/local/bin/agentmail receive --hook" },
              { type: "command", command: "notify-send done" },
              { type: "command", command: "agentmail receive --hook && agentmail status ready" },
            ],
          },
        ],
        SessionStart: [
          { hooks: [{ type: "command", command: "agentmail status ready" }] },
          { hooks: [{ type: "command", command: "agentmail onboard" }] },
        ],
      },
    });
    const value = JSON.parse(settings!.install(old));
    expect(value.hooks.Stop).toEqual([
      { hooks: [{ type: "command", command: "notify-send done" }] },
      { hooks: [{ type: "command", command: STOP_HOOK }] },
    ]);
    expect(value.hooks.SessionStart).toEqual([
      {
        hooks: [
          { type: "command", command: "agentmail status ready" },
          { type: "command", command: "agentmail onboard" },
        ],
      },
    ]);
    expect(JSON.parse(settings!.uninstall(JSON.stringify(value)))).toEqual({
      hooks: { Stop: [{ hooks: [{ type: "command", command: "notify-send done" }] }] },
    });
  });

  test("a file that cannot be parsed, or has hooks of the wrong shape, is refused", () => {
    for (const edit of edits("claude"))
      expect(() => edit.install('{"model": "opus",, }')).toThrow(/cannot parse \/repo\/.*; fix it or move it away/);
    const [settings, server] = edits("claude");
    expect(() => settings!.install('{"hooks": []}')).toThrow('"hooks" in /repo/.claude/settings.json is not an object');
    expect(() => settings!.install('{"hooks": {"Stop": {}}}')).toThrow("hooks.Stop in /repo/.claude/settings.json is not a list");
    expect(() => server!.install('{"mcpServers": []}')).toThrow("mcpServers in /repo/.mcp.json is not an object");
  });
});

describe("a key given twice where agentmail edits", () => {
  // Measured with the pinned CLIs: Claude Code and Gemini CLI run only the last "hooks", Codex CLI rejects the file.
  const twoHooks = (event: string) =>
    `{\n  "hooks": {"${event}": [{"hooks": [{"type": "command", "command": "first"}]}]},\n` +
    `  "model": "opus",\n  "hooks": {"${event}": [{"hooks": [{"type": "command", "command": "last"}]}]}\n}\n`;
  const refusal = (where: string, key: string, lines: string) =>
    `${where} has the key "${key}" twice (lines ${lines}): Claude Code and Gemini CLI read only the last, Codex CLI ` +
    "rejects the file; merge them into one, then run the command again; nothing was changed";

  test("two top-level hooks: install and uninstall refuse, for every agent's hooks file", () => {
    const files = [
      [edits("claude")[0]!, "/repo/.claude/settings.json", "Stop"],
      [edits("codex").find((edit) => edit.path.endsWith("hooks.json"))!, "/repo/.codex/hooks.json", "Stop"],
      [edits("gemini")[0]!, "/repo/.gemini/settings.json", "AfterAgent"],
    ] as const;
    for (const [edit, path, event] of files) {
      expect(() => edit.install(twoHooks(event))).toThrow(refusal(path, "hooks", "2 and 4"));
      expect(() => edit.uninstall(twoHooks(event))).toThrow(refusal(path, "hooks", "2 and 4"));
    }
  });

  test("an event given twice, or a key twice inside a group, is refused too; duplicates elsewhere are not ours to judge", () => {
    const [settings, server] = edits("claude");
    const twoStops = '{"hooks": {\n"Stop": [],\n"Stop": [{"hooks": []}]\n}}';
    expect(() => settings!.install(twoStops)).toThrow(refusal("hooks in /repo/.claude/settings.json", "Stop", "2 and 3"));
    const twoCommands = '{"hooks": {"Stop": [{"hooks": [{"type": "command",\n"command": "a",\n"command": "b"}]}]}}';
    expect(() => settings!.install(twoCommands)).toThrow(
      refusal("hooks.Stop.0.hooks.0 in /repo/.claude/settings.json", "command", "2 and 3"),
    );
    expect(() => server!.install('{"mcpServers": {},\n"mcpServers": {}}')).toThrow(refusal("/repo/.mcp.json", "mcpServers", "1 and 2"));
    // Two "model" keys are the user's business: the install goes ahead and leaves them as they are.
    const installed = settings!.install('{\n  "model": "a",\n  "model": "b"\n}\n');
    expect(installed).toStartWith('{\n  "model": "a",\n  "model": "b",\n  "hooks": {');
  });
});

describe("Codex CLI", () => {
  test("config.toml gets a marked block with the server and the tmux variables; uninstall restores the bytes", () => {
    const [toml, hooks] = edits("codex");
    const installed = toml!.install(CODEX_TOML);
    expect(installed.startsWith(CODEX_TOML + "\n" + BLOCK_START + "\n[mcp_servers.agentmail]\n")).toBe(true);
    const parsed = Bun.TOML.parse(installed) as { mcp_servers: Record<string, unknown>; profiles: unknown };
    expect(parsed.mcp_servers.agentmail).toEqual({
      command: "agentmail",
      args: ["mcp"],
      env_vars: [
        "TMUX",
        "TMUX_PANE",
        "AGENTMAIL_DIR",
        "AGENTMAIL_NAME",
        "AGENTMAIL_URL",
        "AGENTMAIL_NAMESPACE",
        "AGENTMAIL_HOST",
        "AGENTMAIL_REDIS_TIMEOUT",
      ],
      tool_timeout_sec: 660,
    });
    expect(parsed.profiles).toEqual({ fast: { model: "o4-mini" } });
    expect(roundTrip(toml!, CODEX_TOML)).toBe(CODEX_TOML);
    expect(roundTrip(toml!, "")).toBe("");
    expect(hookPlan("codex", "agentmail").map((group) => group.event)).toEqual([
      "SessionStart",
      "UserPromptSubmit",
      "Stop",
      "PreToolUse",
      "SessionEnd",
    ]);
    expect(JSON.parse(roundTrip(hooks!, ""))).toEqual({});
  });

  test("a changed binary replaces the block in place", () => {
    const [toml] = configEdits("codex", "project", where, "/opt/agentmail");
    const moved = toml!.install(edits("codex")[0]!.install(CODEX_TOML) + "\n[later]\nx = 1\n");
    expect(moved).toContain('command = "/opt/agentmail"');
    expect(moved.endsWith("# <<< agentmail <<<\n\n[later]\nx = 1\n")).toBe(true);
  });

  test("unparseable TOML, a server of the same name outside the block, and damaged markers are refused", () => {
    const server: CodexServer = { command: "agentmail", args: ["mcp"], envVars: ["TMUX"], toolTimeoutSec: 1 };
    expect(() => installCodexServer('model = "o3\n', server, "config.toml")).toThrow(
      /cannot parse config\.toml as TOML \(.+\); fix it or move it away/,
    );
    expect(() => installCodexServer('[mcp_servers.agentmail]\ncommand = "x"\n', server, "config.toml")).toThrow(
      "already defines [mcp_servers.agentmail] outside an agentmail block",
    );
    expect(() => installCodexServer(`${BLOCK_START}\n[a]\n`, server, "config.toml")).toThrow("damaged agentmail block");
    expect(() => uninstallCodexServer(`${BLOCK_END}\n${BLOCK_START}\n`, "config.toml")).toThrow("damaged agentmail block");
  });

  test("an edit that would move the user's keys into our table is refused", () => {
    const installed = installCodexServer("", { command: "agentmail", args: ["mcp"], envVars: [], toolTimeoutSec: 1 }, "config.toml");
    // Keys written after the block belong to [mcp_servers.agentmail]; cutting the block out would move them.
    expect(() => uninstallCodexServer(installed + 'model = "o3"\n', "config.toml")).toThrow(
      "would change settings outside agentmail's block",
    );
  });

  test("CRLF files and files without a final newline keep their line ends", () => {
    const [toml] = edits("codex");
    expect(roundTrip(toml!, 'model = "o3"\r\n')).toBe('model = "o3"\r\n');
    expect(toml!.install('model = "o3"')).toContain('model = "o3"\n\n# >>> agentmail');
  });
});

describe("Gemini CLI", () => {
  test("the MCP server and the hooks share settings.json with the user's; uninstall restores the bytes", () => {
    const [settings] = edits("gemini");
    const value = JSON.parse(settings!.install(GEMINI_SETTINGS));
    expect(value.mcpServers.agentmail).toEqual({ command: "agentmail", args: ["mcp"], timeout: 660_000 });
    expect(value.hooks.disabled).toEqual(["secret-scanner"]);
    expect(Object.keys(value.hooks)).toEqual(["disabled", "BeforeTool", "SessionStart", "BeforeAgent", "AfterAgent", "SessionEnd"]);
    expect(value.hooks.AfterAgent[0].hooks[0]).toMatchObject({
      name: "agentmail-deliver",
      type: "command",
      command: STOP_HOOK,
    });
    expect(roundTrip(settings!, GEMINI_SETTINGS)).toBe(GEMINI_SETTINGS);
    expect(JSON.parse(roundTrip(settings!, ""))).toEqual({});
  });

  test("an unparseable settings.json is refused", () => {
    expect(() => edits("gemini")[0]!.install("{ theme: GitHub }")).toThrow("cannot parse /repo/.gemini/settings.json");
  });
});

describe("hook commands", () => {
  test("paths with spaces are quoted for the shell; plain ones are not", () => {
    expect(shellQuote("agentmail")).toBe("agentmail");
    expect(shellQuote("/opt/bin/agentmail-linux-x64")).toBe("/opt/bin/agentmail-linux-x64");
    expect(shellQuote("/opt/my tools/agent'mail")).toBe(`'/opt/my tools/agent'\\''mail'`);
    const [stop] = (hookPlan("claude", "/opt/my tools/agentmail")[2]!.group as { hooks: { command: string }[] }).hooks;
    expect(stop!.command).toStartWith("sh -c 'case $TMUX in /*) ");
    expect(stop!.command).toEndWith(`; exec "$0" receive --hook --ready' '/opt/my tools/agentmail'`);
  });

  test("ours are recognised by what they run, whoever wrote them", () => {
    const guards = GUARDED_CLIS.flatMap((cli) => [
      (binary: string) => hookCommand.guard(binary, cli),
      (binary: string) => hookCommand.guard(binary, cli, true),
    ]);
    for (const make of [...Object.values(hookCommand).filter((each) => each !== hookCommand.guard), ...guards] as ((
      binary: string,
    ) => string)[]) {
      expect(isAgentmailHookCommand(make("agentmail"))).toBe(true);
      expect(isAgentmailHookCommand(make("/usr/local/bin/agentmail-linux-x64"))).toBe(true);
      expect(isAgentmailHookCommand(make(shellQuote("/opt/my tools/agentmail")))).toBe(true);
      expect(isAgentmailHookCommand(make("/opt/am"), "/opt/am")).toBe(true);
      expect(isAgentmailHookCommand(make("/opt/am"))).toBe(false);
    }
    for (const other of [
      "notify-send done",
      "agentmail send bob hi",
      "agentmail status ready; rm -rf /",
      "'unterminated status ready",
      "",
      "  ",
      "git status ready",
      "agentmail guard claude --auto-claim; rm -rf /",
      "agentmail guard vim",
    ]) {
      expect(isAgentmailHookCommand(other)).toBe(false);
    }
  });

  test("the MCP entry is exec'd, so its path is not quoted", () => {
    expect(mcpEntry("claude", "/opt/my tools/agentmail")).toEqual({ type: "stdio", command: "/opt/my tools/agentmail", args: ["mcp"] });
  });
});

describe("dry-run diff", () => {
  test("shows changed lines with context, and nothing when nothing changed", () => {
    const before = ["a", "b", "c", "d", "e", "f", "g", "h", "i"].join("\n") + "\n";
    const after = ["a", "b", "c", "D", "e", "f", "g", "h", "i", "j"].join("\n") + "\n";
    expect(unifiedDiff("f", before, after)).toBe("--- f\n+++ f\n@@ -2,5 +2,5 @@\n b\n c\n-d\n+D\n e\n f\n@@ -8,2 +8,3 @@\n h\n i\n+j\n");
    expect(unifiedDiff("f", before, before)).toBe("");
    expect(unifiedDiff("f", "", "x\n")).toBe("--- f\n+++ f\n@@ -0,0 +1,1 @@\n+x\n");
    expect(unifiedDiff("f", "x\n", "")).toBe("--- f\n+++ f\n@@ -1,1 +0,0 @@\n-x\n");
  });
});

describe("the Claude Code plugin in plugin/", () => {
  const root = join(import.meta.dir, "..", "..", "..");
  const readJson = (path: string) => JSON.parse(readFileSync(join(root, path), "utf8"));

  test("manifest and marketplace entry", () => {
    const manifest = readJson("plugin/.claude-plugin/plugin.json");
    expect(manifest.name).toBe("agentmail");
    expect(manifest.version).toBe(readJson("package.json").version);
    const marketplace = readJson(".claude-plugin/marketplace.json");
    expect(marketplace.owner.name).toBeString();
    expect(marketplace.plugins).toEqual([expect.objectContaining({ name: "agentmail", source: "./plugin" })]);
  });

  test("its hooks are exactly what hooks install writes for Claude Code", () => {
    const hooks: Record<string, unknown[]> = {};
    for (const { event, group } of hookPlan("claude", "agentmail")) (hooks[event] ??= []).push(group);
    expect(readJson("plugin/hooks/hooks.json").hooks).toEqual(hooks);
  });

  test("its MCP server runs agentmail mcp", () => {
    expect(readJson("plugin/.mcp.json")).toEqual({ mcpServers: { agentmail: { command: "agentmail", args: ["mcp"] } } });
  });

  test("slash commands and the skill have the front matter Claude Code reads", () => {
    const frontMatter = (path: string) => {
      const match = /^---\n([\s\S]*?)\n---\n([\s\S]+)$/.exec(readFileSync(join(root, path), "utf8"));
      expect(match).not.toBeNull();
      return {
        fields: Object.fromEntries(
          match![1]!.split("\n").map((line) => [line.slice(0, line.indexOf(":")), line.slice(line.indexOf(":") + 1).trim()]),
        ),
        body: match![2]!,
      };
    };
    const commands = readdirSync(join(root, "plugin/commands")).sort();
    expect(commands).toEqual(["name.md", "receive.md", "recipients.md", "send.md", "status.md"]);
    for (const command of commands) {
      const { fields, body } = frontMatter(`plugin/commands/${command}`);
      expect(fields.description!.length).toBeGreaterThan(10);
      expect(fields["allowed-tools"]).toContain(`Bash(agentmail ${command.replace(".md", "")}:*)`);
      expect(body).toContain("agentmail");
    }
    const skill = frontMatter("plugin/skills/agentmail/SKILL.md");
    expect(skill.fields.name).toBe("agentmail");
    expect(skill.fields.description!.length).toBeGreaterThan(50);
    for (const tool of ["list-recipients", "send", "receive", "wait", "status"]) expect(skill.body).toContain(`\`${tool}\``);
  });
});

test("every agent has an edit for each scope", () => {
  for (const agent of AGENTS)
    for (const scope of ["project", "user"] as const) expect(configEdits(agent, scope, where, "agentmail").length).toBeGreaterThan(0);
});
