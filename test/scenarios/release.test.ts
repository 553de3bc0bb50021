/**
 * `npm run release` for every target (linux, darwin × x64, arm64), built once for this file (~40 s, ~600 MB, removed
 * after): the files it writes, what each archive holds (read with the system's tar), that each binary is built for
 * its platform (its ELF or Mach-O header, which `file` reads too), the checksums (`sha256sum -c`), the manifest, and
 * the npm packages. The other targets' Bun runtimes come from the npm registry once, then from Bun's cache.
 * Installing from a release: test/scenarios/install.test.ts.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdirSync, readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { buildRelease, HOST_TARGET, sha256, type BuiltRelease } from "../support/release.ts";

const TARGETS = ["linux-x64", "linux-arm64", "darwin-x64", "darwin-arm64"];
const ROOT = join(import.meta.dir, "..", "..");
const VERSION = JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")).version as string;

let release: BuiltRelease;
beforeAll(() => {
  release = buildRelease();
});
afterAll(() => release?.remove());

const run = (argv: string[], cwd: string) => {
  const result = Bun.spawnSync(argv, { cwd, stdin: "ignore" });
  return { code: result.exitCode, stdout: result.stdout.toString(), stderr: result.stderr.toString() };
};

/** What the header of an executable says it is built for. */
function platformOf(path: string): string {
  const head = readFileSync(path).subarray(0, 1 << 16);
  const view = new DataView(head.buffer, head.byteOffset, head.byteLength);
  if (head.subarray(0, 4).toString() === "\x7fELF") {
    const machine = view.getUint16(18, true);
    return `linux-${machine === 0x3e ? "x64" : machine === 0xb7 ? "arm64" : `machine ${machine}`}`;
  }
  if (view.getUint32(0, true) === 0xfeedfacf) {
    const cpu = view.getUint32(4, true);
    const arch = cpu === 0x01000007 ? "x64" : cpu === 0x0100000c ? "arm64" : `cpu ${cpu}`;
    // Apple silicon kills an unsigned binary: the load commands must hold a code signature (LC_CODE_SIGNATURE).
    let signed = false;
    for (let i = 0, at = 32; i < view.getUint32(16, true); i++, at += view.getUint32(at + 4, true)) {
      signed ||= view.getUint32(at, true) === 0x1d;
    }
    return `darwin-${arch}${signed ? "" : " (unsigned)"}`;
  }
  return "unknown";
}

describe("npm run release", () => {
  test("writes an archive per target, install.sh, SHA256SUMS and release.json, and npm packages", () => {
    const archives = TARGETS.map((target) => `agentmail-${VERSION}-${target}.tar.gz`);
    expect(readdirSync(release.dir).sort()).toEqual([...archives, "SHA256SUMS", "install.sh", "npm", "release.json"].sort());
    expect(readdirSync(join(release.dir, "npm")).sort()).toEqual(["agentmail", ...TARGETS].sort());
    expect(readFileSync(join(release.dir, "install.sh"), "utf8")).toBe(readFileSync(join(ROOT, "install.sh"), "utf8"));
  });

  test("SHA256SUMS holds each archive's and install.sh's checksum, and sha256sum -c agrees", () => {
    const sums = readFileSync(join(release.dir, "SHA256SUMS"), "utf8");
    const names = [...TARGETS.map((target) => `agentmail-${VERSION}-${target}.tar.gz`), "install.sh"];
    expect(sums).toBe(names.map((name) => `${sha256(join(release.dir, name))}  ${name}\n`).join(""));
    const check = run(["sha256sum", "-c", "SHA256SUMS"], release.dir);
    expect(check).toEqual({ code: 0, stdout: names.map((name) => `${name}: OK\n`).join(""), stderr: "" });
  });

  test("release.json: the version, the commit built, the build time, and each file's true size and sha256", () => {
    const head = run(["git", "rev-parse", "HEAD"], ROOT).stdout.trim();
    const { manifest } = release;
    expect(manifest.version).toBe(VERSION);
    expect(manifest.commit).toMatch(new RegExp(`^${head}(-dirty)?$`));
    expect(manifest.built_at).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
    expect(manifest.files.map((file) => file.name)).toEqual([
      ...TARGETS.map((target) => `agentmail-${VERSION}-${target}.tar.gz`),
      "install.sh",
    ]);
    for (const file of manifest.files) {
      const path = join(release.dir, file.name);
      expect({ name: file.name, size: file.size, sha256: file.sha256 }).toEqual({
        name: file.name,
        size: statSync(path).size,
        sha256: sha256(path),
      });
      if (file.name !== "install.sh")
        expect(`${file.os}-${file.arch}`).toBe(file.name.slice(`agentmail-${VERSION}-`.length, -".tar.gz".length));
    }
  });

  test("each archive holds its directory with the binary for its platform (0755), LICENSE and a README", () => {
    for (const target of TARGETS) {
      const top = `agentmail-${VERSION}-${target}`;
      const listed = run(["tar", "-tvzf", release.archive(target)], release.dir);
      expect(listed.code).toBe(0);
      const entries = listed.stdout
        .trim()
        .split("\n")
        .map((line) => {
          const [mode, owner, , , , name] = line.split(/\s+/);
          return `${mode} ${owner} ${name}`;
        });
      expect(entries).toEqual([
        `drwxr-xr-x 0/0 ${top}/`,
        `-rwxr-xr-x 0/0 ${top}/agentmail`,
        `-rw-r--r-- 0/0 ${top}/LICENSE`,
        `-rw-r--r-- 0/0 ${top}/README.md`,
      ]);
      const out = join(release.dir, "unpacked", target);
      mkdirSync(out, { recursive: true });
      expect(run(["tar", "-xzf", release.archive(target), "-C", out], release.dir).code).toBe(0);
      const binary = join(out, top, "agentmail");
      expect(platformOf(binary)).toBe(target);
      expect(run(["file", binary], out).stdout).toContain(target.startsWith("linux") ? "ELF 64-bit" : "Mach-O 64-bit");
      // The same binary is in the platform's npm package.
      expect(sha256(join(release.dir, "npm", target, "bin", "agentmail"))).toBe(sha256(binary));
      const readme = readFileSync(join(out, top, "README.md"), "utf8");
      expect(readme).toContain(
        `agentmail ${VERSION} for ${target}. Built from commit ${release.manifest.commit} at ${release.manifest.built_at}.`,
      );
      const license = readFileSync(join(out, top, "LICENSE"), "utf8");
      expect(license).toStartWith(readFileSync(join(ROOT, "LICENSE"), "utf8"));
      // The notices of the packages bundled into the binary, each with its license text.
      for (const bundled of ["@modelcontextprotocol/sdk", "citty", "consola", "jsonc-parser", "yaml", "zod"]) {
        const { version } = JSON.parse(readFileSync(join(ROOT, "node_modules", bundled, "package.json"), "utf8"));
        expect(license).toContain(`\n${bundled} ${version} (`);
      }
    }
  });

  test(`the binary for this machine (${HOST_TARGET}) runs and says the version and commit release.json names`, () => {
    const binary = join(release.dir, "unpacked", HOST_TARGET, `agentmail-${VERSION}-${HOST_TARGET}`, "agentmail");
    const said = run([binary, "--version", "--json"], release.dir);
    expect(said.code).toBe(0);
    const { commit, built_at } = release.manifest;
    expect(JSON.parse(said.stdout)).toEqual({ version: VERSION, commit, built_at });
  });

  test("the npm packages: one per platform (os, cpu, its binary); the command's lists them all, at this version", () => {
    for (const target of TARGETS) {
      const own = JSON.parse(readFileSync(join(release.dir, "npm", target, "package.json"), "utf8"));
      const [os, cpu] = target.split("-");
      expect(own).toMatchObject({ name: `@agentmail-tmux/${target}`, version: VERSION, os: [os], cpu: [cpu], files: ["bin/agentmail"] });
      expect(own.bin).toBeUndefined();
    }
    const main = JSON.parse(readFileSync(join(release.dir, "npm", "agentmail", "package.json"), "utf8"));
    expect(main).toMatchObject({
      name: "@agentmail-tmux/agentmail",
      version: VERSION,
      bin: { agentmail: "bin/agentmail" },
      scripts: { postinstall: "node install.js" },
      optionalDependencies: Object.fromEntries(TARGETS.map((target) => [`@agentmail-tmux/${target}`, VERSION])),
    });
    expect(readdirSync(join(release.dir, "npm", "agentmail")).sort()).toEqual([
      "LICENSE",
      "README.md",
      "bin",
      "install.js",
      "package.json",
    ]);
  });
});
