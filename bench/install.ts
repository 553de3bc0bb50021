/**
 * What installing agentmail costs a new user, and what the installed command costs every hook afterwards.
 *
 *   install to first mail   the README's steps, timed one after the other: the install line (install.sh piped from
 *                           curl, from a release served over loopback http; or `npm install -g` of the packed npm
 *                           tarballs, with npm kept off the registry), `agentmail setup` in a fresh repository from a
 *                           tmux window (the real agent CLIs on PATH when test/agents installed them, else stand-ins:
 *                           setup only looks them up), then the tutorial's first mail: `send bob …` in alice's window
 *                           and `receive` in bob's. The download itself is loopback here: add the archive's size over
 *                           your bandwidth (the sizes are printed).
 *   hook cost               the agentmail that install.sh put in ~/.local/bin against the one `npm install -g` put on
 *                           PATH, interleaved, each called by name as the hooks call it: `agentmail --version`, Codex
 *                           CLI's Stop hook (`agentmail receive --hook --ready`: agentmail starts), Claude Code's Stop
 *                           hook (`sh -c …`, its doorbell quiet with no mail: agentmail does not start); and, for
 *                           scale, `--version` through a Node program that runs the binary (what a Node shim costs).
 *
 *   bun bench/install.ts [--rounds 200] [--installs 3]
 */
import { existsSync, mkdirSync, mkdtempSync, readFileSync, realpathSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { hookCommand } from "../src/hooks/hook-commands.ts";
import { AGENT_CLIS, agentFolder } from "../test/agents/install-agents.ts";
import versions from "../test/agents/versions.json" with { type: "json" };
import { buildRelease, HOST_TARGET } from "../test/support/release.ts";
import { removeDir, tempRepo } from "../test/support/repo.ts";
import { TmuxServer } from "../test/support/tmux-server.ts";
import { summarize } from "./timing.ts";

const option = (name: string, fallback: number) => {
  const at = process.argv.indexOf(name);
  return at === -1 ? fallback : Number(process.argv[at + 1]);
};
const ROUNDS = option("--rounds", 200);
const INSTALLS = option("--installs", 3);

async function timed(argv: string[], env: Record<string, string>, cwd: string): Promise<{ ms: number; stdout: string }> {
  const started = performance.now();
  const child = Bun.spawn(argv, { env, cwd, stdin: "ignore", stdout: "pipe", stderr: "pipe" });
  const [stdout, stderr, code] = await Promise.all([new Response(child.stdout).text(), new Response(child.stderr).text(), child.exited]);
  const ms = performance.now() - started;
  if (code !== 0) throw new Error(`${argv.join(" ")} exited ${code}: ${stderr.trim().slice(-500)}`);
  return { ms, stdout };
}

/** The agent CLIs a user would have: the pinned real ones where test/agents installed them, else stand-ins. */
function agentClis(dir: string): string {
  mkdirSync(dir, { recursive: true });
  let real = 0;
  for (const agent of AGENT_CLIS) {
    const binary = join(agentFolder(agent), "node_modules", ".bin", versions[agent].bin);
    // Setup only looks the command up: where the real one is not installed, a stand-in does as well.
    if (existsSync(binary)) {
      symlinkSync(binary, join(dir, agent));
      real++;
    } else writeFileSync(join(dir, agent), "#!/bin/sh\necho stand-in\n", { mode: 0o755 });
  }
  return real === AGENT_CLIS.length ? "the real agent CLIs" : `${real} real agent CLIs, the others stand-ins`;
}

const release = buildRelease([HOST_TARGET]);
const scratch = realpathSync(mkdtempSync(join(tmpdir(), "agentmail-bench-install-")));
const server = Bun.serve({
  hostname: "127.0.0.1",
  port: 0,
  fetch: (request) => {
    const name = new URL(request.url).pathname.slice(1);
    const path = join(release.dir, name);
    return name.includes("/") || !existsSync(path) ? new Response("not found", { status: 404 }) : new Response(Bun.file(path));
  },
});
const base = `http://127.0.0.1:${server.port}`;
const clis = join(scratch, "agent-clis");
const which = agentClis(clis);
const dead = Bun.listen({ hostname: "127.0.0.1", port: 0, socket: { data() {} } });
const deadRegistry = `http://127.0.0.1:${dead.port}/`;
dead.stop(true);

function npmEnv(home: string): Record<string, string> {
  return {
    HOME: home,
    PATH: process.env.PATH!,
    npm_config_cache: join(home, ".npm"),
    npm_config_registry: deadRegistry,
    npm_config_offline: "true",
    npm_config_update_notifier: "false",
    npm_config_fund: "false",
    npm_config_audit: "false",
  };
}

const packs = join(scratch, "packs");
mkdirSync(packs);
for (const dir of ["agentmail", HOST_TARGET]) {
  await timed(["npm", "pack", join(release.dir, "npm", dir), "--pack-destination", packs], npmEnv(join(scratch, "pack-home")), scratch);
}
const version = release.manifest.version;
const tarballs = [`agentmail-tmux-agentmail-${version}.tgz`, `agentmail-tmux-${HOST_TARGET}-${version}.tgz`].map((name) =>
  join(packs, name),
);

interface Steps {
  install: number;
  setup: number;
  send: number;
  receive: number;
}

/** One new user: a fresh HOME and repository, the install line, setup, the first mail. Returns the bin dir too. */
async function newUser(route: "install.sh" | "npm", index: number): Promise<{ steps: Steps; bin: string; home: string }> {
  const home = join(scratch, `${route}-${index}`);
  mkdirSync(home);
  let install: number;
  let bin: string;
  if (route === "install.sh") {
    const env = { HOME: home, PATH: "/usr/bin:/bin", AGENTMAIL_RELEASE_URL: base };
    install = (await timed(["sh", "-c", `curl -fsSL ${base}/install.sh | sh`], env, home)).ms;
    bin = join(home, ".local", "bin");
  } else {
    const prefix = join(home, ".npm-global");
    install = (await timed(["npm", "install", "-g", "--prefix", prefix, ...tarballs], npmEnv(home), home)).ms;
    bin = join(prefix, "bin");
  }
  const repo = tempRepo("agentmail-bench-repo-");
  const tmux = TmuxServer.start(["alice", "bob"], repo.dir);
  const as = (window: string) => ({
    ...tmux.agent(window).env,
    HOME: home,
    PATH: `${bin}:${clis}:/usr/bin:/bin`,
    XDG_STATE_HOME: join(home, ".local", "state"),
    CODEX_HOME: "",
    CLAUDE_CONFIG_DIR: "",
    GEMINI_CLI_HOME: "",
    GEMINI_CLI_TRUST_WORKSPACE: "true",
  });
  try {
    const setup = (await timed(["sh", "-c", "agentmail setup"], as("alice"), repo.dir)).ms;
    const send = (await timed(["sh", "-c", 'agentmail send bob "PR #12 is ready for review"'], as("alice"), repo.dir)).ms;
    const received = await timed(["sh", "-c", "agentmail receive"], as("bob"), repo.dir);
    if (!received.stdout.includes("PR #12 is ready for review")) throw new Error(`bob did not get the mail: ${received.stdout}`);
    await timed(["sh", "-c", "agentmail mailman stop"], as("alice"), repo.dir);
    return { steps: { install, setup, send, receive: received.ms }, bin, home };
  } finally {
    tmux.stop();
    repo.remove();
  }
}

const fmt = (ms: number) => (ms >= 1000 ? `${(ms / 1000).toFixed(2)} s` : `${ms.toFixed(1)} ms`);

try {
  const load = readFileSync("/proc/loadavg", "utf8").split(" ").slice(0, 3).join(" ");
  const archive = release.manifest.files.find((file) => file.name.endsWith(`${HOST_TARGET}.tar.gz`))!;
  console.log(`agentmail ${version}, ${HOST_TARGET}; archive ${(archive.size / 1e6).toFixed(1)} MB; ${which}; load ${load}`);
  console.log("\ninstall to first mail (median of each step over the new users):");
  const installed: Record<string, string> = {};
  for (const route of ["install.sh", "npm"] as const) {
    const runs: Steps[] = [];
    for (let i = 0; i < INSTALLS; i++) {
      const user = await newUser(route, i);
      runs.push(user.steps);
      installed[route] = user.bin;
    }
    const median = (key: keyof Steps) => summarize(runs.map((run) => run[key])).median;
    const total = summarize(runs.map((run) => run.install + run.setup + run.send + run.receive)).median;
    const line = (["install", "setup", "send", "receive"] as const).map((key) => `${key} ${fmt(median(key))}`).join(", ");
    console.log(`  ${route.padEnd(10)} ${line}; total ${fmt(total)} (n=${INSTALLS})`);
  }

  // The hook cost, interleaved: each round runs every command of both installs, in alternating order.
  const repo = tempRepo("agentmail-bench-repo-");
  const tmux = TmuxServer.start(["agent"], repo.dir);
  const envOf = (bin: string) => ({ ...tmux.agent("agent").env, PATH: `${bin}:/usr/bin:/bin`, HOME: scratch });
  const nodeShim = join(scratch, "shim.js");
  writeFileSync(
    nodeShim,
    `const r = require("node:child_process").spawnSync(${JSON.stringify(join(installed.npm!, "agentmail"))}, process.argv.slice(2), { stdio: "inherit" });\nprocess.exitCode = r.status;\n`,
  );
  const commands = {
    "--version": (bin: string) => [join(bin, "agentmail"), "--version"],
    "Codex Stop hook (agentmail starts)": (_bin: string) => ["sh", "-c", hookCommand.deliveryInDaemon("agentmail")],
    "Claude Stop hook (doorbell quiet)": (_bin: string) => ["sh", "-c", hookCommand.delivery("agentmail")],
  };
  const samples = new Map<string, number[]>();
  const add = (key: string, ms: number) => samples.set(key, [...(samples.get(key) ?? []), ms]);
  try {
    for (const bin of Object.values(installed)) await timed(["sh", "-c", "agentmail receive --hook --ready"], envOf(bin), repo.dir);
    for (let round = 0; round < ROUNDS; round++) {
      const order = round % 2 === 0 ? ["install.sh", "npm"] : ["npm", "install.sh"];
      for (const [label, argv] of Object.entries(commands)) {
        for (const route of order) add(`${label}|${route}`, (await timed(argv(installed[route]!), envOf(installed[route]!), repo.dir)).ms);
      }
      add("node|npm", (await timed(["node", nodeShim, "--version"], envOf(installed.npm!), repo.dir)).ms);
    }
  } finally {
    tmux.stop();
    repo.remove();
  }
  console.log(`\nhook cost, wall ms (median / p90 of ${ROUNDS} interleaved rounds):`);
  for (const label of Object.keys(commands)) {
    const release = summarize(samples.get(`${label}|install.sh`)!);
    const npm = summarize(samples.get(`${label}|npm`)!);
    console.log(
      `  ${label.padEnd(36)} install.sh ${release.median.toFixed(2)} / ${release.p90.toFixed(2)}   npm ${npm.median.toFixed(2)} / ${npm.p90.toFixed(2)}   ratio ${(npm.median / release.median).toFixed(3)}`,
    );
  }
  const node = summarize(samples.get("node|npm")!);
  console.log(`  ${"--version through a Node program".padEnd(36)} ${node.median.toFixed(2)} / ${node.p90.toFixed(2)}`);
} finally {
  server.stop(true);
  removeDir(scratch);
  release.remove();
}
