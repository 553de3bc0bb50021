/**
 * `npm run release`: every target (linux, darwin × x64, arm64) compiled and packed into dist/release/:
 *
 *   agentmail-<version>-<os>-<arch>.tar.gz   the binary, LICENSE (with the bundled software's notices), a short README
 *   install.sh                               the installer (the repository's own)
 *   SHA256SUMS                               what `sha256sum -c` reads: each archive and install.sh
 *   release.json                             version, commit, build time, and each file's size and sha256
 *   npm/<os>-<arch>/                         the npm package holding that platform's binary (`os`, `cpu`)
 *   npm/agentmail/                           the npm package of the command: its postinstall puts the platform's binary
 *                                            in place of its bin entry (packaging/npm/install.js)
 *
 *   bun scripts/release.ts [--targets linux-x64,darwin-arm64] [--out DIR]
 *
 * Every binary comes from one bundle, laid out from one recording of the host build (build.ts). Publishing is
 * `npm publish` of each npm/<os>-<arch> directory, then of npm/agentmail; the other files go on the release page.
 */
import { copyFileSync, cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, relative } from "node:path";

/** A path as the log shows it: relative to here when inside. */
const shown = (path: string) => (relative(process.cwd(), path).startsWith("..") ? path : relative(process.cwd(), path));
import { buildInfo, compile, recordedOrder, TARGETS, type Target } from "../build.ts";
import type { Build } from "../src/mail/version.ts";
import { tarGz } from "./release/tar.ts";

const ROOT = join(import.meta.dir, "..");
const manifest = JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8"));
const VERSION: string = manifest.version;
/** The npm scope of the packages: the name `agentmail` on the registry is an unrelated email-API SDK's. */
const SCOPE = "@agentmail-tmux";
export const MAIN_PACKAGE = `${SCOPE}/agentmail`;

const sha256 = (data: Uint8Array) => new Bun.CryptoHasher("sha256").update(data).digest("hex");

interface ReleaseFile {
  name: string;
  size: number;
  sha256: string;
  os?: string;
  arch?: string;
}

/** The packages bundled into the binary (from the bundler's metafile), each with its license text. */
function notices(packageDirs: readonly string[]): string {
  const sections = packageDirs.map((dir) => {
    const own = JSON.parse(readFileSync(join(dir, "package.json"), "utf8"));
    const file = ["LICENSE", "LICENSE.md", "LICENSE.txt", "license", "LICENCE"].find((name) => {
      try {
        return statSync(join(dir, name)).isFile();
      } catch {
        return false;
      }
    });
    const text = file ? readFileSync(join(dir, file), "utf8").trim() : `(${own.license}; no license file in the package)`;
    return `${own.name} ${own.version} (${own.license})\n\n${text}\n`;
  });
  const bun =
    "The executable is the Bun runtime (MIT, https://bun.com) with agentmail's code inside. Bun includes software " +
    "under other licenses (JavaScriptCore and WebKit under LGPL-2 and BSD, and others), listed at " +
    "https://bun.com/docs/project/licensing.";
  const rule = `\n${"-".repeat(78)}\n\n`;
  return `${rule}Third-party software in the agentmail binary\n\n${bun}\n${rule}${sections.join(rule)}`;
}

function archiveReadme(target: Target, build: Build): string {
  const readme = readFileSync(join(ROOT, "packaging", "README.md"), "utf8");
  const from = `Built from commit ${build.commit ?? "unknown"} at ${build.builtAt}.`;
  return readme.replace(/\n/, `\n\nagentmail ${VERSION} for ${target}. ${from}\n`);
}

/** The npm package of one platform: its binary, and `os`/`cpu` so npm installs it only there. */
function platformPackage(dir: string, target: Target, license: string): void {
  const [os, cpu] = target.split("-") as [string, string];
  const own = {
    name: `${SCOPE}/${target}`,
    version: VERSION,
    description: `The agentmail binary for ${os === "darwin" ? "macOS" : "Linux"} ${cpu} (installed by ${MAIN_PACKAGE})`,
    license: manifest.license,
    repository: manifest.repository,
    os: [os],
    cpu: [cpu],
    files: ["bin/agentmail"],
    preferUnplugged: true,
  };
  writeFileSync(join(dir, "package.json"), `${JSON.stringify(own, null, 2)}\n`);
  writeFileSync(join(dir, "LICENSE"), license);
  writeFileSync(join(dir, "README.md"), `# ${own.name}\n\n${own.description}. Install ${MAIN_PACKAGE} instead.\n`);
}

/** The npm package of the command: its bin entry, the postinstall that puts the binary there, every platform optional. */
function mainPackage(dir: string, targets: readonly Target[], license: string): void {
  cpSync(join(ROOT, "packaging", "npm"), dir, { recursive: true });
  const own = {
    name: MAIN_PACKAGE,
    version: VERSION,
    description: manifest.description,
    license: manifest.license,
    repository: manifest.repository,
    homepage: manifest.homepage,
    keywords: ["tmux", "agents", "mail", "claude-code", "codex", "gemini-cli", "mcp"],
    bin: { agentmail: "bin/agentmail" },
    scripts: { postinstall: "node install.js" },
    optionalDependencies: Object.fromEntries(targets.map((target) => [`${SCOPE}/${target}`, VERSION])),
    engines: { node: ">=18" },
    files: ["bin/agentmail", "install.js", "LICENSE", "README.md"],
  };
  writeFileSync(join(dir, "package.json"), `${JSON.stringify(own, null, 2)}\n`);
  writeFileSync(join(dir, "LICENSE"), license);
  copyFileSync(join(ROOT, "packaging", "README.md"), join(dir, "README.md"));
}

function parseArgs(argv: string[]): { targets: Target[]; out: string } {
  let targets: Target[] = [...TARGETS];
  let out = join(ROOT, "dist", "release");
  for (let i = 0; i < argv.length; i++) {
    const [flag, inline] = argv[i]!.split(/=(.*)/s, 2) as [string, string | undefined];
    const value = inline ?? argv[++i];
    if (value === undefined) throw new Error(`${flag} needs a value`);
    if (flag === "--out") out = value;
    else if (flag === "--targets") {
      targets = value.split(",") as Target[];
      const unknown = targets.filter((target) => !TARGETS.includes(target));
      if (unknown.length > 0 || targets.length === 0) throw new Error(`--targets takes some of ${TARGETS.join(",")}, not '${value}'`);
    } else throw new Error(`unknown option '${flag}'; usage: bun scripts/release.ts [--targets ${TARGETS.join(",")}] [--out DIR]`);
  }
  return { targets, out };
}

export async function release(targets: readonly Target[], out: string): Promise<ReleaseFile[]> {
  const build = buildInfo();
  const mtime = Math.floor(Date.parse(build.builtAt!) / 1000);
  rmSync(out, { recursive: true, force: true });
  mkdirSync(join(out, "npm"), { recursive: true });
  const scratch = mkdtempSync(join(tmpdir(), "agentmail-release-"));
  const files: ReleaseFile[] = [];
  try {
    const order = await recordedOrder(scratch, build);
    let license = "";
    for (const target of targets) {
      const dir = join(out, "npm", target);
      mkdirSync(join(dir, "bin"), { recursive: true });
      const binary = join(dir, "bin", "agentmail");
      const bundled = await compile(binary, build, target, order);
      license ||= `${readFileSync(join(ROOT, "LICENSE"), "utf8").trimEnd()}\n${notices(bundled)}`;
      platformPackage(dir, target, license);
      const name = `agentmail-${VERSION}-${target}.tar.gz`;
      const archive = tarGz(
        `agentmail-${VERSION}-${target}`,
        [
          { name: "agentmail", data: readFileSync(binary), mode: 0o755 },
          { name: "LICENSE", data: Buffer.from(license), mode: 0o644 },
          { name: "README.md", data: Buffer.from(archiveReadme(target, build)), mode: 0o644 },
        ],
        mtime,
      );
      writeFileSync(join(out, name), archive);
      const [os, arch] = target.split("-");
      files.push({ name, size: archive.length, sha256: sha256(archive), os, arch });
      console.error(`packed ${shown(join(out, name))}`);
    }
    mainPackage(join(out, "npm", "agentmail"), targets, license);
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
  const installer = readFileSync(join(ROOT, "install.sh"));
  writeFileSync(join(out, "install.sh"), installer, { mode: 0o755 });
  files.push({ name: "install.sh", size: installer.length, sha256: sha256(installer) });
  writeFileSync(join(out, "SHA256SUMS"), files.map((file) => `${file.sha256}  ${file.name}\n`).join(""));
  const document = { version: VERSION, commit: build.commit, built_at: build.builtAt, files };
  writeFileSync(join(out, "release.json"), `${JSON.stringify(document, null, 2)}\n`);
  return files;
}

if (import.meta.main) {
  try {
    const { targets, out } = parseArgs(process.argv.slice(2));
    await release(targets, out);
    console.error(`release ${VERSION} in ${shown(out)}: ${targets.join(", ")}`);
  } catch (error) {
    console.error(`error: ${(error as Error).message}`);
    process.exitCode = 1;
  }
}
