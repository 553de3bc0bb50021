/**
 * The postinstall of agentmail's npm package. The binary comes in the one package of this platform
 * (`<scope>/<os>-<arch>`, an optional dependency that npm installs only where its `os` and `cpu` match); this script
 * checks that it runs and puts it in place of bin/agentmail, the file npm linked as the command. So the
 * `agentmail` on PATH is the native binary itself: every agent hook runs it, and a Node start in front of it would
 * cost more than a hook with no mail does (esbuild's package does the same). Where npm runs no install scripts
 * (--ignore-scripts, or npm 12, which runs only the scripts a user allowed), bin/agentmail is a small Node program that
 * runs the binary and, the first time, puts the binary in its own place the same way: from the second call on, no Node
 * starts either.
 *
 * Plain CommonJS for any Node that npm 10 and later run on; nothing is downloaded here.
 */
const fs = require("node:fs");
const path = require("node:path");
const { spawnSync } = require("node:child_process");
const manifest = require("./package.json");

const platforms = Object.keys(manifest.optionalDependencies || {});

/** The platform package's name for this machine: `@scope/linux-x64`. */
function platformPackage() {
  const scope = manifest.name.slice(0, manifest.name.indexOf("/"));
  return `${scope}/${process.platform}-${process.arch}`;
}

/** The native binary for this machine, or an Error that says why there is none and what to do. */
function nativeBinary() {
  const name = platformPackage();
  if (!platforms.includes(name)) {
    const builds = platforms.map((each) => each.slice(each.indexOf("/") + 1)).join(", ");
    return new Error(`agentmail has no build for ${process.platform}-${process.arch} (builds: ${builds})`);
  }
  try {
    return path.join(path.dirname(require.resolve(`${name}/package.json`)), "bin", "agentmail");
  } catch {
    return new Error(
      `${name}, which holds the binary for this machine, is not installed (npm leaves optional dependencies out ` +
        `with --omit=optional or --no-optional): install ${manifest.name} again without it`,
    );
  }
}

/** Whether `binary` runs here and is this version: null if so, else why not. */
function runsHere(binary) {
  const result = spawnSync(binary, ["--version"], { encoding: "utf8", timeout: 30000 });
  if (result.error) return `${binary} does not run: ${result.error.message}`;
  const version = (result.stdout || "").trim().split(/\s+/)[0];
  if (result.status !== 0) return `${binary} --version exited ${result.status}: ${(result.stderr || "").trim().slice(-300)}`;
  if (version !== manifest.version) return `${binary} is version ${version}, not ${manifest.version}`;
  return null;
}

/**
 * bin/agentmail becomes the binary: a copy beside it, renamed over it, so it is never half written. A copy, not a hard
 * link to the file npm unpacked: npm wrote that one in small pieces, and while its pages stay cached as written, the
 * binary starts slower (measured on Linux 6.18, ext4: --version 8.3 ms against 5.8 ms for the same bytes copied in
 * one go; as fast once the file was read through again). Then the platform package's file becomes a link to the
 * copy, so that the binary is on disk once.
 */
function putInPlace(binary) {
  const command = path.join(__dirname, "bin", "agentmail");
  const temp = path.join(__dirname, "bin", `.agentmail-${process.pid}`);
  try {
    fs.rmSync(temp, { force: true });
    fs.copyFileSync(binary, temp);
    fs.chmodSync(temp, 0o755);
    fs.renameSync(temp, command);
  } finally {
    fs.rmSync(temp, { force: true });
  }
  const link = `${binary}.${process.pid}`;
  try {
    fs.linkSync(command, link);
    fs.renameSync(link, binary);
  } catch {
    // Another file system, or not ours to change: two copies then.
  } finally {
    fs.rmSync(link, { force: true });
  }
  return command;
}

function install() {
  const binary = nativeBinary();
  if (binary instanceof Error) throw binary;
  const broken = runsHere(binary);
  if (broken) throw new Error(broken);
  const command = putInPlace(binary);
  const after = runsHere(command);
  if (after) throw new Error(after);
}

if (require.main === module) {
  try {
    install();
  } catch (error) {
    console.error(`agentmail: ${error.message}`);
    process.exitCode = 1;
  }
}

module.exports = { nativeBinary, putInPlace };
