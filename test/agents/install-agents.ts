/**
 * Installs the agent CLIs the agents suite runs (Claude Code, Codex CLI, Gemini CLI) at the versions pinned in
 * versions.json, each into its own folder of a cache outside the repository: together they are about 0.75 GB, too
 * much for the everyday dependency tree. An installed version is reused; a new pin installs next to the old one.
 *
 *   bun test/agents/install-agents.ts [claude|codex|gemini ...]     (all three by default)
 *
 * The cache is $AGENTMAIL_AGENTS_CACHE, else $XDG_CACHE_HOME/agentmail-agents, else ~/.cache/agentmail-agents; each
 * agent lives in <cache>/<package>@<version>/ (an `npm install --prefix` there), so only npm and the registry are
 * needed.
 */
import { existsSync, mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync } from "node:fs";
import { homedir } from "node:os";
import { dirname, join } from "node:path";
import versions from "./versions.json" with { type: "json" };

export type AgentCli = keyof typeof versions;
export const AGENT_CLIS = Object.keys(versions) as AgentCli[];

export interface Installed {
  agent: AgentCli;
  title: string;
  version: string;
  /** The CLI's executable, to run directly. */
  binary: string;
  /** False when it came from the cache. */
  installed: boolean;
  seconds: number;
}

export function cacheRoot(env: Record<string, string | undefined> = process.env): string {
  if (env.AGENTMAIL_AGENTS_CACHE) return env.AGENTMAIL_AGENTS_CACHE;
  return join(env.XDG_CACHE_HOME || join(env.HOME || homedir(), ".cache"), "agentmail-agents");
}

/** `<cache>/@openai/codex@0.169.0`: the package's own name, so the folder says what is in it. */
export function agentFolder(agent: AgentCli, env: Record<string, string | undefined> = process.env): string {
  const { package: name, version } = versions[agent];
  return join(cacheRoot(env), `${name}@${version}`);
}

const binaryIn = (folder: string, agent: AgentCli) => join(folder, "node_modules", ".bin", versions[agent].bin);

/** The version the installed CLI reports, or why it would not say. */
function reportedVersion(binary: string): { ok: true; text: string } | { ok: false; why: string } {
  const result = Bun.spawnSync([binary, "--version"], { stdin: "ignore", timeout: 60_000, env: { ...process.env, NO_COLOR: "1" } });
  const text = result.stdout.toString().trim();
  if (result.exitCode !== 0)
    return { ok: false, why: `'${binary} --version' exited ${result.exitCode}: ${result.stderr.toString().trim().slice(-500)}` };
  return { ok: true, text };
}

function installedVersion(folder: string, name: string): string | undefined {
  try {
    return JSON.parse(readFileSync(join(folder, "node_modules", name, "package.json"), "utf8")).version;
  } catch {
    return undefined;
  }
}

function tail(text: string, lines = 15): string {
  return text.trim().split("\n").slice(-lines).join("\n");
}

/**
 * The pinned CLI, from the cache or installed now. Throws an Error that says what failed and how to retry; the
 * agents suite turns it into failing tests, never a skip.
 */
export function ensureAgent(agent: AgentCli, env: Record<string, string | undefined> = process.env): Installed {
  const { package: name, version, title } = versions[agent];
  const started = performance.now();
  const folder = agentFolder(agent, env);
  const done = (installed: boolean): Installed => ({
    agent,
    title,
    version,
    binary: binaryIn(folder, agent),
    installed,
    seconds: (performance.now() - started) / 1000,
  });
  // Only a finished install is ever renamed into place (ran once, reported its version), so its manifest suffices.
  if (existsSync(binaryIn(folder, agent)) && installedVersion(folder, name) === version) return done(false);
  rmSync(folder, { recursive: true, force: true });
  const npm = Bun.which("npm");
  const retry = `retry with 'bun test/agents/install-agents.ts ${agent}' (cache: ${cacheRoot(env)}, set AGENTMAIL_AGENTS_CACHE to move it)`;
  if (!npm) throw new Error(`cannot install ${title} (${name}@${version}): npm is not on PATH; install Node.js with npm, then ${retry}`);
  let staging: string;
  try {
    mkdirSync(dirname(folder), { recursive: true });
    // Installed beside its final place and renamed in, so an interrupted install never looks like a finished one.
    staging = mkdtempSync(`${folder}.installing-`);
  } catch (error) {
    throw new Error(`cannot install ${title}: cannot create a folder in the cache (${(error as Error).message}); ${retry}`);
  }
  try {
    const result = Bun.spawnSync(
      [npm, "install", "--no-audit", "--no-fund", "--loglevel=error", "--prefix", staging, `${name}@${version}`],
      {
        stdin: "ignore",
        timeout: 15 * 60_000,
      },
    );
    if (result.exitCode !== 0) {
      const output = tail(result.stderr.toString() + result.stdout.toString());
      throw new Error(
        `cannot install ${title}: 'npm install ${name}@${version}' exited ${result.exitCode ?? "on a signal"}:\n${output}\n${retry}`,
      );
    }
    const reported = reportedVersion(binaryIn(staging, agent));
    if (!reported.ok) throw new Error(`${title} installed but does not run: ${reported.why}\n${retry}`);
    if (!reported.text.includes(version)) throw new Error(`${title} installed but reports '${reported.text}', not ${version}\n${retry}`);
    try {
      renameSync(staging, folder);
    } catch (error) {
      // Another run finished the same install first: use that one.
      if (!existsSync(binaryIn(folder, agent))) throw error;
    }
    return done(true);
  } finally {
    rmSync(staging, { recursive: true, force: true });
  }
}

if (import.meta.main) {
  const wanted = process.argv.slice(2);
  const unknown = wanted.filter((name) => !AGENT_CLIS.includes(name as AgentCli));
  if (unknown.length > 0) {
    console.error(`error: unknown agent '${unknown[0]}'; give any of: ${AGENT_CLIS.join(", ")}`);
    process.exitCode = 2;
  } else {
    for (const agent of (wanted.length > 0 ? wanted : AGENT_CLIS) as AgentCli[]) {
      try {
        const result = ensureAgent(agent);
        const how = result.installed ? `installed in ${result.seconds.toFixed(1)} s` : "cached";
        console.log(`${agent}: ${versions[agent].package}@${result.version} ${how}: ${result.binary}`);
      } catch (error) {
        console.error(`error: ${(error as Error).message}`);
        process.exitCode = 1;
      }
    }
  }
}
