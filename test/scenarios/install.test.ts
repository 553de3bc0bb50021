/**
 * Installing agentmail as a new user would, from a release built once for this file (`npm run release` for this
 * machine's target only; test/scenarios/release.test.ts checks all four): install.sh from a file:// release (and one
 * served over http on loopback) into a fresh HOME, with every refusal it owes; then the npm packages, packed with
 * `npm pack` and installed with `npm install -g` into a fresh prefix, HOME and cache, with npm pointed at a dead
 * loopback port so that the unrelated `agentmail` of the registry can never come in. Each installed agentmail runs
 * the README's tutorial.
 */
import { afterAll, beforeAll, beforeEach, afterEach, describe, expect, test } from "bun:test";
import {
  existsSync,
  linkSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  realpathSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { runTutorial } from "../support/readme-tutorial.ts";
import { buildRelease, HOST_TARGET, sha256, type BuiltRelease } from "../support/release.ts";
import { removeDir, tempRepo } from "../support/repo.ts";

let release: BuiltRelease;
let version: string;
/** What the release's binary says to --version. */
let versionLine: string;
/** The binary inside this machine's archive. */
let binary: string;
let scratch: string;
let home: string;

beforeAll(() => {
  release = buildRelease([HOST_TARGET]);
  version = release.manifest.version;
  binary = join(release.dir, "npm", HOST_TARGET, "bin", "agentmail");
  versionLine = Bun.spawnSync([binary, "--version"]).stdout.toString().trim();
});
afterAll(() => release?.remove());
beforeEach(() => {
  scratch = realpathSync(mkdtempSync(join(tmpdir(), "agentmail-install-test-")));
  home = join(scratch, "home");
  mkdirSync(home);
});
afterEach(() => removeDir(scratch));

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

const run = (argv: string[], env: Record<string, string>, cwd = scratch): Run => {
  const result = Bun.spawnSync(argv, { cwd, env, stdin: "ignore" });
  return { code: result.exitCode, stdout: result.stdout.toString(), stderr: result.stderr.toString() };
};

describe("install.sh", () => {
  /** install.sh of the release, as `sh install.sh …` with this HOME and only the system's tools on PATH. */
  const install = (args: string[] = [], env: Record<string, string> = {}) =>
    run(["/bin/sh", join(release.dir, "install.sh"), ...args], {
      HOME: home,
      PATH: "/usr/bin:/bin",
      AGENTMAIL_RELEASE_URL: `file://${release.dir}`,
      ...env,
    });
  const bin = () => join(home, ".local", "bin");
  const installed = () => join(bin(), "agentmail");
  const notOnPath = (dir: string) =>
    `${dir} is not on your PATH: add it (e.g. in ~/.profile: export PATH="${dir}:$PATH"), then, inside a git repository: agentmail setup\n`;

  /** A copy of the release's SHA256SUMS and this machine's archive (linked, unless it is to be changed). */
  function releaseCopy(change: { archive?: (bytes: Buffer) => Buffer; sums?: (text: string) => string | null } = {}): string {
    const dir = join(scratch, "copy");
    mkdirSync(dir);
    const archive = release.archive(HOST_TARGET);
    const name = archive.slice(release.dir.length + 1);
    if (change.archive) writeFileSync(join(dir, name), change.archive(readFileSync(archive)));
    else linkSync(archive, join(dir, name));
    const sums = (change.sums ?? ((text) => text))(readFileSync(join(release.dir, "SHA256SUMS"), "utf8"));
    if (sums !== null) writeFileSync(join(dir, "SHA256SUMS"), sums);
    return dir;
  }

  /** An older agentmail already installed: a script that says its version. */
  function olderInstalled(): string {
    mkdirSync(bin(), { recursive: true });
    writeFileSync(installed(), "#!/bin/sh\necho 0.0.1\n", { mode: 0o755 });
    return sha256(installed());
  }

  /** The refusal: exit 1, one line on stderr, nothing on stdout, and nothing left in the directory. */
  function expectRefused(result: Run, line: RegExp): void {
    expect({ code: result.code, stdout: result.stdout }).toEqual({ code: 1, stdout: "" });
    expect(result.stderr).toMatch(line);
    expect(result.stderr.split("\n")).toHaveLength(2);
    if (existsSync(bin())) expect(readdirSync(bin()).filter((name) => name !== "agentmail")).toEqual([]);
  }

  test("from a file:// release into a fresh HOME: ~/.local/bin/agentmail, the archive's binary, which runs the README tutorial", async () => {
    const result = install();
    expect(result).toEqual({ code: 0, stdout: `agentmail ${versionLine} installed: ${installed()}\n${notOnPath(bin())}`, stderr: "" });
    expect(readdirSync(bin())).toEqual(["agentmail"]);
    expect(sha256(installed())).toBe(sha256(binary));
    expect(statSync(installed()).mode & 0o777).toBe(0o755);
    const repo = tempRepo();
    try {
      expect(await runTutorial(repo, bin(), { HOME: home })).toBeGreaterThan(5);
    } finally {
      repo.remove();
    }
  });

  test("run again, the same version: 'already installed', the file untouched; with the directory on PATH it says so", () => {
    expect(install().code).toBe(0);
    const before = statSync(installed());
    const again = install([], { PATH: `${bin()}:/usr/bin:/bin` });
    expect(again).toEqual({
      code: 0,
      stdout: `agentmail ${version} is already installed: ${installed()}\n${bin()} is on your PATH. Next, inside a git repository: agentmail setup\n`,
      stderr: "",
    });
    const after = statSync(installed());
    expect([after.ino, after.mtimeMs]).toEqual([before.ino, before.mtimeMs]);
  });

  test("another version installed is replaced, and named", () => {
    olderInstalled();
    const result = install();
    expect(result.code).toBe(0);
    expect(result.stdout).toStartWith(`agentmail ${versionLine} installed: ${installed()} (was 0.0.1)\n`);
    expect(sha256(installed())).toBe(sha256(binary));
  });

  test("--prefix DIR installs there, creating it, and the PATH note names it", () => {
    const prefix = join(scratch, "tools", "bin");
    const result = install(["--prefix", prefix]);
    expect(result).toEqual({
      code: 0,
      stdout: `agentmail ${versionLine} installed: ${join(prefix, "agentmail")}\n${notOnPath(prefix)}`,
      stderr: "",
    });
    expect(existsSync(bin())).toBe(false);
  });

  test("a tampered archive is refused: exit 1, one line, and the agentmail installed before stays as it was", () => {
    const before = olderInstalled();
    const copy = releaseCopy({
      archive: (bytes) => {
        bytes[bytes.length >> 1]! ^= 0xff;
        return bytes;
      },
    });
    const result = install([], { AGENTMAIL_RELEASE_URL: `file://${copy}` });
    expectRefused(
      result,
      /^agentmail install: checksum mismatch for agentmail-\S+\.tar\.gz \(SHA256SUMS says [0-9a-f]{64}, the download is [0-9a-f]{64}\): it is damaged or was tampered with; nothing installed\n$/,
    );
    expect(sha256(installed())).toBe(before);
  });

  test("a missing checksum is refused: no line for this machine's archive, or no SHA256SUMS at all", () => {
    const noLine = releaseCopy({ sums: (text) => text.replace(/^.*\.tar\.gz\n/gm, "") });
    expectRefused(
      install([], { AGENTMAIL_RELEASE_URL: `file://${noLine}` }),
      new RegExp(
        `^agentmail install: file://${noLine}/SHA256SUMS has no checksum for a ${HOST_TARGET} archive: refusing to install what cannot be checked\n$`,
      ),
    );
    removeDir(noLine);
    const noSums = releaseCopy({ sums: () => null });
    expectRefused(
      install([], { AGENTMAIL_RELEASE_URL: `file://${noSums}` }),
      /^agentmail install: cannot read file:\/\/\S+\/SHA256SUMS\n$/,
    );
    expect(existsSync(join(home, ".local"))).toBe(false);
  });

  test("an unknown platform, a missing tool, a release that cannot be reached: one line each, exit 1, nothing installed", () => {
    const fake = (dir: string, name: string, script: string) => {
      mkdirSync(dir, { recursive: true });
      writeFileSync(join(dir, name), `#!/bin/sh\n${script}\n`, { mode: 0o755 });
    };
    fake(join(scratch, "plan9"), "uname", "case $1 in -s) echo Plan9 ;; *) echo x86_64 ;; esac");
    expectRefused(
      install([], { PATH: `${join(scratch, "plan9")}:/usr/bin:/bin` }),
      /^agentmail install: no agentmail build for the operating system 'Plan9' \(builds: linux and darwin, x64 and arm64\)\n$/,
    );
    fake(join(scratch, "riscv"), "uname", "case $1 in -s) echo Linux ;; *) echo riscv64 ;; esac");
    expectRefused(
      install([], { PATH: `${join(scratch, "riscv")}:/usr/bin:/bin` }),
      /^agentmail install: no agentmail build for the architecture 'riscv64' \(builds: x64 and arm64\)\n$/,
    );
    // A PATH with every tool the script uses but the ones a test leaves out.
    const tools = (leftOut: string[]) => {
      const dir = join(scratch, `without-${leftOut.join("-")}`);
      mkdirSync(dir);
      for (const tool of ["uname", "tar", "gzip", "mktemp", "cp", "rm", "mkdir", "grep", "head", "cut", "chmod", "mv", "sha256sum"]) {
        if (!leftOut.includes(tool)) symlinkSync(Bun.which(tool)!, join(dir, tool));
      }
      return dir;
    };
    expectRefused(
      install([], { PATH: tools(["sha256sum"]) }),
      /^agentmail install: neither sha256sum nor shasum is installed, and agentmail is never installed unchecked: install coreutils \(or perl's shasum\)\n$/,
    );
    expectRefused(install([], { PATH: tools(["tar"]) }), /^agentmail install: tar is missing: install it, then run this again\n$/);
    const dead = Bun.listen({ hostname: "127.0.0.1", port: 0, socket: { data() {} } });
    const url = `http://127.0.0.1:${dead.port}/release`;
    dead.stop(true);
    expectRefused(install([], { AGENTMAIL_RELEASE_URL: url }), new RegExp(`^agentmail install: download of ${url}/SHA256SUMS failed\n$`));
    expectRefused(
      install([], { AGENTMAIL_RELEASE_URL: "ftp://example.invalid" }),
      /^agentmail install: AGENTMAIL_RELEASE_URL must start with/,
    );
    expect(existsSync(join(home, ".local"))).toBe(false);
  });

  test("a binary that does not run here, or says another version, is not installed: the one installed stays", () => {
    const before = olderInstalled();
    for (const [script, line] of [
      ["exit 3", /^agentmail install: the agentmail 9\.9\.9 binary does not run on this machine: \n$/],
      ["echo 1.0.0", /^agentmail install: the binary in agentmail-9\.9\.9-\S+ says '1\.0\.0', not version 9\.9\.9; nothing installed\n$/],
    ] as const) {
      const dir = join(scratch, "forged");
      const top = join(dir, "unpacked", `agentmail-9.9.9-${HOST_TARGET}`);
      mkdirSync(top, { recursive: true });
      writeFileSync(join(top, "agentmail"), `#!/bin/sh\n${script}\n`, { mode: 0o755 });
      const name = `agentmail-9.9.9-${HOST_TARGET}.tar.gz`;
      expect(
        run(
          ["tar", "-czf", join(dir, name), "-C", join(dir, "unpacked"), `agentmail-9.9.9-${HOST_TARGET}`],
          process.env as Record<string, string>,
        ).code,
      ).toBe(0);
      writeFileSync(join(dir, "SHA256SUMS"), `${sha256(join(dir, name))}  ${name}\n`);
      expectRefused(install([], { AGENTMAIL_RELEASE_URL: `file://${dir}` }), line);
      expect(sha256(installed())).toBe(before);
      removeDir(dir);
    }
  });

  test("over http (curl): a release served on loopback installs the same binary", async () => {
    const server = Bun.serve({
      hostname: "127.0.0.1",
      port: 0,
      fetch: (request) => {
        const name = new URL(request.url).pathname.replace(/^\/release\//, "");
        const path = join(release.dir, name);
        return name.includes("/") || !existsSync(path) ? new Response("not found", { status: 404 }) : new Response(Bun.file(path));
      },
    });
    try {
      const child = Bun.spawn(["/bin/sh", join(release.dir, "install.sh")], {
        cwd: scratch,
        env: { HOME: home, PATH: "/usr/bin:/bin", AGENTMAIL_RELEASE_URL: `http://127.0.0.1:${server.port}/release/` },
        stdout: "pipe",
        stderr: "pipe",
      });
      const [stdout, stderr, code] = await Promise.all([
        new Response(child.stdout).text(),
        new Response(child.stderr).text(),
        child.exited,
      ]);
      expect({ code, stderr }).toEqual({ code: 0, stderr: "" });
      expect(stdout).toStartWith(`agentmail ${versionLine} installed: ${installed()}\n`);
      expect(sha256(installed())).toBe(sha256(binary));
    } finally {
      server.stop(true);
    }
  });
});

describe("the npm packages", () => {
  let packs: { main: string; platform: string };
  let packDir: string;
  let prefix: string;

  /** npm with this test's HOME and a fresh cache, kept off the registry: a dead loopback port, and --offline. */
  function npm(args: string[], { cache = join(scratch, "npm-cache"), npmHome = home, cwd = scratch } = {}): Run {
    const dead = Bun.listen({ hostname: "127.0.0.1", port: 0, socket: { data() {} } });
    const registry = `http://127.0.0.1:${dead.port}/`;
    dead.stop(true);
    return run(
      ["npm", ...args],
      {
        HOME: npmHome,
        PATH: process.env.PATH!,
        npm_config_cache: cache,
        npm_config_registry: registry,
        npm_config_offline: "true",
        npm_config_fetch_retries: "0",
        npm_config_update_notifier: "false",
        npm_config_fund: "false",
        npm_config_audit: "false",
      },
      cwd,
    );
  }

  // `npm pack` of each package once (packing the 114 MB binary takes seconds); each test installs into its own prefix.
  beforeAll(() => {
    packDir = realpathSync(mkdtempSync(join(tmpdir(), "agentmail-install-packs-")));
    for (const dir of ["agentmail", HOST_TARGET]) {
      const packed = npm(["pack", join(release.dir, "npm", dir), "--pack-destination", packDir], {
        cache: join(packDir, "cache"),
        npmHome: packDir,
        cwd: packDir,
      });
      if (packed.code !== 0) throw new Error(`npm pack ${dir} failed: ${packed.stderr}`);
    }
    removeDir(join(packDir, "cache"));
    packs = {
      main: join(packDir, `agentmail-tmux-agentmail-${version}.tgz`),
      platform: join(packDir, `agentmail-tmux-${HOST_TARGET}-${version}.tgz`),
    };
  });
  afterAll(() => removeDir(packDir));
  beforeEach(() => {
    prefix = join(scratch, "prefix");
  });

  /** What `agentmail` on the prefix's PATH is: the file its link resolves to, and `file`'s word for it. */
  const command = () => {
    const path = realpathSync(join(prefix, "bin", "agentmail"));
    return { path, kind: run(["file", "-b", path], process.env as Record<string, string>).stdout.trim() };
  };

  test("npm install -g of the tarballs: agentmail on PATH is the native binary itself, and runs the README tutorial", async () => {
    const result = npm(["install", "-g", "--prefix", prefix, packs.main, packs.platform]);
    expect(result.code, result.stderr).toBe(0);
    const { path, kind } = command();
    expect(path).toBe(join(prefix, "lib", "node_modules", "@agentmail-tmux", "agentmail", "bin", "agentmail"));
    expect(kind).toStartWith("ELF 64-bit LSB");
    expect(readFileSync(path).subarray(0, 2).toString()).not.toBe("#!");
    expect(sha256(path)).toBe(sha256(binary));
    // On disk once: the platform package's file is the same file.
    const platformBinary = join(prefix, "lib", "node_modules", "@agentmail-tmux", HOST_TARGET, "bin", "agentmail");
    expect(statSync(platformBinary).ino).toBe(statSync(path).ino);
    expect(run([join(prefix, "bin", "agentmail"), "--version"], { PATH: "/usr/bin:/bin" }).stdout).toBe(`${versionLine}\n`);
    const repo = tempRepo();
    try {
      expect(await runTutorial(repo, join(prefix, "bin"), { HOME: home })).toBeGreaterThan(5);
    } finally {
      repo.remove();
    }
  });

  test("with install scripts off, agentmail is a Node program that runs the binary, and puts the binary in its place", () => {
    const result = npm(["install", "-g", "--ignore-scripts", "--prefix", prefix, packs.main, packs.platform]);
    expect(result.code, result.stderr).toBe(0);
    expect(command().kind).toContain("script");
    // doctor notes it: every hook would start Node first; with the fixes.
    const doctorNote = () => {
      const result = run([binary, "doctor", "--json"], { PATH: `${join(prefix, "bin")}:/usr/bin:/bin`, HOME: home });
      const { findings } = JSON.parse(result.stdout) as {
        findings: { area: string; status: string; message: string; fix: string | null }[];
      };
      return findings.filter((each) => each.message.startsWith("the agentmail on PATH"));
    };
    expect(doctorNote()).toEqual([
      {
        area: "hooks",
        status: "note",
        message:
          `the agentmail on PATH (${join(prefix, "bin", "agentmail")}) is the npm package's Node program, not the native ` +
          "binary (npm ran no install scripts), so every hook starts Node first",
        fix:
          `run it once (agentmail --version) as a user who may write ${join(prefix, "lib", "node_modules", "@agentmail-tmux", "agentmail", "bin")}: ` +
          "it puts the binary in its place; or install again with its install script: " +
          "npm install -g --allow-scripts=@agentmail-tmux/agentmail @agentmail-tmux/agentmail",
      },
    ]);
    const first = run([join(prefix, "bin", "agentmail"), "--version"], { PATH: process.env.PATH! });
    expect(first).toEqual({ code: 0, stdout: `${versionLine}\n`, stderr: "" });
    expect(command().kind).toStartWith("ELF 64-bit LSB");
    expect(doctorNote()).toEqual([]);
    expect(readdirSync(join(prefix, "lib", "node_modules", "@agentmail-tmux", "agentmail", "bin"))).toEqual(["agentmail"]);
    // The exit code and the output come through the Node program as from the binary.
    const failing = run([join(prefix, "bin", "agentmail"), "sned"], { PATH: process.env.PATH! });
    expect(failing.code).toBe(1);
    expect(failing.stderr).toStartWith("error: unknown command 'sned'; did you mean 'send'?");
  });

  test("npx of the tarballs runs the binary with no install", () => {
    const result = npm(["exec", "--yes", `--package=${packs.main}`, `--package=${packs.platform}`, "--", "agentmail", "--version"]);
    expect({ code: result.code, stdout: result.stdout }).toEqual({ code: 0, stdout: `${versionLine}\n` });
  });

  test("without the platform's package (optional dependencies left out), the install fails and says why", () => {
    const result = npm(["install", "-g", "--prefix", prefix, packs.main]);
    expect(result.code).not.toBe(0);
    expect(result.stderr).toContain(
      `agentmail: @agentmail-tmux/${HOST_TARGET}, which holds the binary for this machine, is not installed (npm leaves optional dependencies out with --omit=optional or --no-optional): install @agentmail-tmux/agentmail again without it`,
    );
    expect(existsSync(join(prefix, "bin", "agentmail"))).toBe(false);
  });
});

// The README says which name to install, so that no user gets the registry's unrelated `agentmail`.
test("the README and install.sh name the scoped package and the release location of package.json", () => {
  const root = join(import.meta.dir, "..", "..");
  const manifest = JSON.parse(readFileSync(join(root, "package.json"), "utf8"));
  const home = manifest.repository.url.replace(/^git\+/, "").replace(/\.git$/, "");
  expect(readFileSync(join(root, "install.sh"), "utf8")).toContain(`\nDEFAULT_RELEASE_URL=${home}/releases/latest/download\n`);
  const readme = readFileSync(join(root, "README.md"), "utf8");
  expect(readme).toContain("npm install -g @agentmail-tmux/agentmail");
  expect(readme).toContain(`${home}/releases/latest/download/install.sh`);
});
