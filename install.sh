#!/bin/sh
# agentmail's installer: downloads the release archive for this machine and its SHA256SUMS, refuses to install
# anything whose checksum is missing or differs, and puts the binary in ~/.local/bin (or --prefix DIR), never half
# written (a temporary file in that directory, checked to run, then renamed).
#
#   curl -fsSL https://github.com/agentmail-tmux/agentmail/releases/latest/download/install.sh | sh
#   sh install.sh [--prefix DIR]                       (curl ... | sh -s -- --prefix DIR)
#
#   AGENTMAIL_RELEASE_URL   where the release is: an https:// or http:// address, or a file:// directory
#                           (default: the latest release)
#
# POSIX sh; needs uname, tar, and sha256sum or shasum; curl or wget for an http(s) address.
set -eu

DEFAULT_RELEASE_URL=https://github.com/agentmail-tmux/agentmail/releases/latest/download

fail() {
  printf 'agentmail install: %s\n' "$*" >&2
  exit 1
}

usage() {
  printf '%s\n' "usage: install.sh [--prefix DIR]" \
    "Installs agentmail from AGENTMAIL_RELEASE_URL (default: $DEFAULT_RELEASE_URL) into DIR (default: ~/.local/bin)."
}

prefix=
while [ $# -gt 0 ]; do
  case $1 in
    --prefix)
      if [ $# -lt 2 ] || [ -z "$2" ]; then fail "--prefix needs a directory"; fi
      prefix=$2
      shift 2
      ;;
    --prefix=?*)
      prefix=${1#--prefix=}
      shift
      ;;
    -h | --help)
      usage
      exit 0
      ;;
    *) fail "unknown argument '$1'; usage: install.sh [--prefix DIR]" ;;
  esac
done
if [ -z "$prefix" ]; then
  [ -n "${HOME:-}" ] || fail "HOME is not set: give the directory with --prefix DIR"
  prefix=$HOME/.local/bin
fi

# The build for this machine: linux or darwin, x64 or arm64.
os=$(uname -s 2>/dev/null) || os=unknown
arch=$(uname -m 2>/dev/null) || arch=unknown
case $os in
  Linux) os=linux ;;
  Darwin) os=darwin ;;
  *) fail "no agentmail build for the operating system '$os' (builds: linux and darwin, x64 and arm64)" ;;
esac
case $arch in
  x86_64 | amd64) arch=x64 ;;
  aarch64 | arm64) arch=arm64 ;;
  *) fail "no agentmail build for the architecture '$arch' (builds: x64 and arm64)" ;;
esac
# A shell under Rosetta says x86_64 on an Apple silicon Mac: the arm64 build is the native one.
if [ "$os" = darwin ] && [ "$arch" = x64 ] && [ "$(sysctl -n sysctl.proc_translated 2>/dev/null || true)" = 1 ]; then
  arch=arm64
fi

command -v tar >/dev/null 2>&1 || fail "tar is missing: install it, then run this again"
if command -v sha256sum >/dev/null 2>&1; then
  sha256() { sha256sum "$1" | cut -d ' ' -f 1; }
elif command -v shasum >/dev/null 2>&1; then
  sha256() { shasum -a 256 "$1" | cut -d ' ' -f 1; }
else
  fail "neither sha256sum nor shasum is installed, and agentmail is never installed unchecked: install coreutils (or perl's shasum)"
fi

base=${AGENTMAIL_RELEASE_URL:-$DEFAULT_RELEASE_URL}
base=${base%/}

# fetch NAME FILE: the release's file NAME into FILE.
fetch() {
  case $base in
    file://*)
      cp "${base#file://}/$1" "$2" 2>/dev/null || fail "cannot read $base/$1"
      ;;
    http://* | https://*)
      if command -v curl >/dev/null 2>&1; then
        curl -fsSL --retry 2 -o "$2" "$base/$1" 2>/dev/null || fail "download of $base/$1 failed"
      elif command -v wget >/dev/null 2>&1; then
        wget -q -O "$2" "$base/$1" 2>/dev/null || fail "download of $base/$1 failed"
      else
        fail "neither curl nor wget is installed: install one, or set AGENTMAIL_RELEASE_URL to a file:// directory holding the release"
      fi
      ;;
    *) fail "AGENTMAIL_RELEASE_URL must start with https://, http:// or file://, not '$base'" ;;
  esac
}

tmp=$(mktemp -d 2>/dev/null || mktemp -d -t agentmail) || fail "cannot create a temporary directory"
partial=
cleanup() {
  rm -rf "$tmp"
  if [ -n "$partial" ]; then rm -f "$partial"; fi
}
trap cleanup EXIT
trap 'exit 129' HUP
trap 'exit 130' INT
trap 'exit 143' TERM

# SHA256SUMS names the archive of each platform (agentmail-<version>-<os>-<arch>.tar.gz), so it comes first.
fetch SHA256SUMS "$tmp/SHA256SUMS"
line=$(grep -E "^[0-9a-f]{64}  agentmail-[0-9A-Za-z.+-]+-$os-$arch\\.tar\\.gz\$" "$tmp/SHA256SUMS" | head -n 1) || true
[ -n "$line" ] || fail "$base/SHA256SUMS has no checksum for a $os-$arch archive: refusing to install what cannot be checked"
expected=${line%% *}
archive=${line#*  }
version=${archive#agentmail-}
version=${version%-"$os"-"$arch".tar.gz}

fetch "$archive" "$tmp/$archive"
actual=$(sha256 "$tmp/$archive")
[ "$actual" = "$expected" ] ||
  fail "checksum mismatch for $archive (SHA256SUMS says $expected, the download is $actual): it is damaged or was tampered with; nothing installed"

mkdir "$tmp/unpacked"
tar -xzf "$tmp/$archive" -C "$tmp/unpacked" 2>/dev/null || fail "cannot unpack $archive"
binary=$tmp/unpacked/agentmail-$version-$os-$arch/agentmail
[ -f "$binary" ] || fail "$archive holds no agentmail-$version-$os-$arch/agentmail"

mkdir -p "$prefix" 2>/dev/null || fail "cannot create $prefix: choose another directory with --prefix DIR"
prefix=$(cd "$prefix" && pwd -P) || fail "cannot enter $prefix"
target=$prefix/agentmail
[ ! -d "$target" ] || fail "$target is a directory: move it away, or choose another directory with --prefix DIR"

on_path() {
  case ":${PATH:-}:" in
    *":$prefix:"*)
      first=$(command -v agentmail 2>/dev/null || true)
      if [ -n "$first" ] && [ "$first" != "$target" ]; then
        printf '%s\n' "$prefix is on your PATH, but $first comes first: remove it, or put $prefix before it"
      else
        printf '%s\n' "$prefix is on your PATH. Next, inside a git repository: agentmail setup"
      fi
      ;;
    *) printf '%s\n' "$prefix is not on your PATH: add it (e.g. in ~/.profile: export PATH=\"$prefix:\$PATH\"), then, inside a git repository: agentmail setup" ;;
  esac
}

if [ -f "$target" ] && [ "$(sha256 "$target")" = "$(sha256 "$binary")" ]; then
  printf '%s\n' "agentmail $version is already installed: $target"
  on_path
  exit 0
fi
before=
if [ -e "$target" ]; then before=$("$target" --version 2>/dev/null | head -n 1) || before=; fi

partial=$prefix/.agentmail.install.$$
cp "$binary" "$partial" 2>/dev/null || fail "cannot write to $prefix: choose another directory with --prefix DIR"
chmod 755 "$partial"
# Run where it will live (a temporary directory may be mounted noexec): a binary that does not start is not installed.
said=$("$partial" --version 2>&1) || fail "the agentmail $version binary does not run on this machine: $(printf '%s' "$said" | head -n 1)"
case $said in
  "$version" | "$version "*) ;;
  *) fail "the binary in $archive says '$said', not version $version; nothing installed" ;;
esac
mv -f "$partial" "$target" || fail "cannot replace $target"
partial=

if [ -n "$before" ]; then
  printf '%s\n' "agentmail $said installed: $target (was $before)"
else
  printf '%s\n' "agentmail $said installed: $target"
fi
on_path
