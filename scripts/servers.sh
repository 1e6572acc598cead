#!/usr/bin/env bash
# Installs the five server builds the integration tests run against, under
# .servers/ at the repository root (git-ignored), or under the directory
# RESPIRE_SERVERS_DIR names (the harness looks there too):
#
#   .servers/bin/redis-7.0-server   Redis 7.0.15  (Debian bookworm's redis-server)
#   .servers/bin/redis-8.0-server   Redis 8.0.2   (Debian trixie's redis-tools)
#   .servers/bin/valkey-8.1-server  Valkey 8.1.1  (Debian trixie's valkey-tools)
#   .servers/bin/redis-8.6-server   Redis 8.6.3   (Debian experimental's redis-tools)
#   .servers/bin/valkey-9.1-server  Valkey 9.1.2  (Debian sid's valkey-tools)
#
# The trixie builds need trixie's C/C++ runtime, which a bookworm host lacks;
# the experimental and sid builds run on that same runtime.
# We fetch the packages with apt-get under a private, temporary apt
# configuration (the host's /etc/apt is never touched), unpack them with
# dpkg -x and run each binary through trixie's own dynamic loader with a
# library path that points only into the unpacked tree.
#
# Idempotent: a wrapper that already answers --version with the expected
# version is left alone. Set FORCE=1 to rebuild everything.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
SERVERS="${RESPIRE_SERVERS_DIR:-$ROOT/.servers}"
BIN="$SERVERS/bin"
TRIXIE="$SERVERS/trixie"

REDIS70_VERSION=7.0.15
REDIS80_VERSION=8.0.2
VALKEY81_VERSION=8.1.1
REDIS86_VERSION=8.6.3
VALKEY91_VERSION=9.1.2

# Debian package versions, matched as prefixes of what the archive offers so
# that a security rebuild (+deb13uN) is picked up without editing this file.
REDIS70_DEB=5:7.0.15-
REDIS80_DEB=5:8.0.2-
VALKEY81_DEB=8.1.1+dfsg1-
REDIS86_DEB=5:8.6.3-
VALKEY91_DEB=9.1.2

# The runtime the trixie binaries need, beyond the server packages
# themselves. Checked afterwards with the loader's --list: any library the
# list misses fails the script instead of falling back to the host's copy.
TRIXIE_LIBS=(libc6 libstdc++6 libgcc-s1 libatomic1 libssl3t64 libjemalloc2
  liblzf1 libsystemd0 libcap2 zlib1g libzstd1)

log() { printf 'servers: %s\n' "$*" >&2; }
die() { printf 'servers: error: %s\n' "$*" >&2; exit 1; }

# has_version WRAPPER VERSION: the wrapper runs and reports VERSION.
has_version() {
  [[ -x "$1" ]] || return 1
  local out
  out=$("$1" --version 2>/dev/null) || return 1
  [[ "$out" == *"v=$2 "* ]]
}

# ---------------------------------------------------------------- apt helpers
APT_TMP=""
cleanup() { if [[ -n "$APT_TMP" ]]; then rm -rf "$APT_TMP"; APT_TMP=""; fi; }
trap cleanup EXIT

# apt_setup SUITE: a throwaway apt state for one Debian suite; sets APT_OPTS.
apt_setup() {
  local suite=$1
  APT_TMP=$(mktemp -d)
  mkdir -p "$APT_TMP/lists/partial" "$APT_TMP/cache/archives/partial"
  local keyring=/usr/share/keyrings/debian-archive-keyring.gpg
  [[ -r "$keyring" ]] || die "$keyring missing (apt-get install debian-archive-keyring)"
  echo "deb [signed-by=$keyring] http://deb.debian.org/debian $suite main" >"$APT_TMP/sources.list"
  APT_OPTS=(
    -o "Dir::Etc::sourcelist=$APT_TMP/sources.list"
    -o "Dir::Etc::sourceparts=-"
    -o "Dir::State::Lists=$APT_TMP/lists"
    -o "Dir::State::status=/dev/null"
    -o "Dir::Cache=$APT_TMP/cache"
    -o "Dir::Cache::pkgcache="
    -o "Dir::Cache::srcpkgcache="
    -o "APT::Sandbox::User=$(id -un)"
    -o "Debug::NoLocking=1"
  )
  log "fetching the $suite package index"
  apt-get "${APT_OPTS[@]}" -qq update >/dev/null || die "apt-get update for $suite failed"
}

# apt_version PKG PREFIX: the newest archive version of PKG starting with PREFIX.
apt_version() {
  local v
  v=$(apt-cache "${APT_OPTS[@]}" madison "$1" | awk -F'|' '{gsub(/ /,"",$2); print $2}' |
    grep -F -- "$2" | grep -E "^${2//+/\\+}" | head -n1 || true)
  if [[ -z "$v" ]]; then
    log "available versions of $1:"
    apt-cache "${APT_OPTS[@]}" madison "$1" >&2 || true
    die "no version of $1 matching $2*"
  fi
  echo "$v"
}

# apt_fetch DIR PKG[=VER]...: download the .deb files into DIR.
apt_fetch() {
  local dir=$1; shift
  mkdir -p "$dir"
  (cd "$dir" && apt-get "${APT_OPTS[@]}" -qq download "$@" >/dev/null) || die "apt-get download $* failed"
}

# ---------------------------------------------------------------- Redis 7.0
install_redis70() {
  local w="$BIN/redis-7.0-server"
  if [[ -z "${FORCE:-}" ]] && has_version "$w" "$REDIS70_VERSION"; then
    log "redis-7.0-server ok"; return
  fi
  # REDIS_SERVER names the Redis 7.0 binary to wrap (default: redis-server on
  # PATH). SERVERS_NO_APT_INSTALL=1 skips `apt-get install redis-server`.
  local sys=${REDIS_SERVER:-}
  [[ -n "$sys" ]] || sys=$(command -v redis-server || true)
  [[ -x "$sys" ]] || sys=""
  if [[ -z "$sys" && $(id -u) -eq 0 && -z "${SERVERS_NO_APT_INSTALL:-}" ]]; then
    log "installing redis-server with apt-get"
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq redis-server >/dev/null ||
      log "apt-get install redis-server failed; unpacking bookworm's package instead"
    sys=$(command -v redis-server || true)
  fi
  if [[ -n "$sys" ]] && "$sys" --version | grep -q "v=$REDIS70_VERSION "; then
    write_wrapper "$w" "exec $(printf %q "$sys") \"\$@\""
  else
    [[ -n "$sys" ]] && log "$sys is not $REDIS70_VERSION: $("$sys" --version)"
    # Unpack bookworm's build; it runs on the host's (bookworm) loader.
    local dir="$SERVERS/bookworm"
    rm -rf "$dir"; mkdir -p "$dir/debs" "$dir/root"
    cleanup; apt_setup bookworm
    apt_fetch "$dir/debs" "redis-tools=$(apt_version redis-tools "$REDIS70_DEB")" libjemalloc2 liblzf1
    for d in "$dir"/debs/*.deb; do dpkg -x "$d" "$dir/root"; done
    ln -sf redis-check-rdb "$dir/root/usr/bin/redis-server"
    write_wrapper "$w" 'd=$(cd "$(dirname "$0")/../bookworm/root" && pwd)' \
      'LD_LIBRARY_PATH="$d/usr/lib/x86_64-linux-gnu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" exec "$d/usr/bin/redis-server" "$@"'
  fi
  has_version "$w" "$REDIS70_VERSION" || die "$w does not report $REDIS70_VERSION: $("$w" --version 2>&1)"
  log "redis-7.0-server ok"
}

# ---------------------------------------------------------------- trixie
install_trixie() {
  local need=""
  if [[ -n "${FORCE:-}" ]] || ! has_version "$BIN/redis-8.0-server" "$REDIS80_VERSION" ||
    ! has_version "$BIN/valkey-8.1-server" "$VALKEY81_VERSION"; then
    need=1
  fi
  if [[ -z "$need" ]]; then
    log "redis-8.0-server ok"; log "valkey-8.1-server ok"; return
  fi
  cleanup; apt_setup trixie
  local r v
  r=$(apt_version redis-tools "$REDIS80_DEB")
  v=$(apt_version valkey-tools "$VALKEY81_DEB")
  log "trixie: redis-tools $r, valkey-tools $v"
  # Unpack beside the old tree and swap it in at the end, so that servers
  # started from the old tree meanwhile keep working.
  local new="$TRIXIE.new"
  rm -rf "$new"; mkdir -p "$new/debs" "$new/root"
  apt_fetch "$new/debs" "redis-tools=$r" "valkey-tools=$v" "${TRIXIE_LIBS[@]}"
  for d in "$new"/debs/*.deb; do dpkg -x "$d" "$new/root"; done
  rm -rf "$new/debs"
  # The server is the same executable as the RDB checker; it picks its role
  # from the name it is started under.
  ln -sf redis-check-rdb "$new/root/usr/bin/redis-server"
  ln -sf valkey-check-rdb "$new/root/usr/bin/valkey-server"

  local lib="$new/root/usr/lib/x86_64-linux-gnu"
  local ld="$lib/ld-linux-x86-64.so.2"
  [[ -x "$ld" ]] || die "trixie loader not found at $ld"
  for exe in redis-server valkey-server; do
    local missing
    missing=$("$ld" --inhibit-cache --library-path "$lib" --list "$new/root/usr/bin/$exe" | grep 'not found' || true)
    [[ -z "$missing" ]] || die "$exe: libraries missing from TRIXIE_LIBS: $missing"
  done
  rm -rf "$TRIXIE.old"
  [[ -e "$TRIXIE" ]] && mv "$TRIXIE" "$TRIXIE.old"
  mv "$new" "$TRIXIE"
  rm -rf "$TRIXIE.old"
  for pair in redis-8.0:redis-server valkey-8.1:valkey-server; do
    # --inhibit-cache keeps the host's /etc/ld.so.cache (bookworm) out of the
    # lookup; every library must come from the unpacked trixie tree.
    write_wrapper "$BIN/${pair%%:*}-server" \
      'r=$(cd "$(dirname "$0")/../trixie/root" && pwd)' \
      'l="$r/usr/lib/x86_64-linux-gnu"' \
      "exec \"\$l/ld-linux-x86-64.so.2\" --inhibit-cache --library-path \"\$l\" \"\$r/usr/bin/${pair#*:}\" \"\$@\""
  done
  has_version "$BIN/redis-8.0-server" "$REDIS80_VERSION" ||
    die "redis-8.0-server does not report $REDIS80_VERSION: $("$BIN/redis-8.0-server" --version 2>&1)"
  log "redis-8.0-server ok"
  has_version "$BIN/valkey-8.1-server" "$VALKEY81_VERSION" ||
    die "valkey-8.1-server does not report $VALKEY81_VERSION: $("$BIN/valkey-8.1-server" --version 2>&1)"
  log "valkey-8.1-server ok"
}

# ---------------------------------------------------------------- newer suites
# install_newer NAME VERSION SUITE PACKAGE DEB_PREFIX EXE: one server package
# from a suite newer than trixie (experimental, sid), unpacked alone under
# .servers/SUITE and run through trixie's loader with trixie's runtime; a
# library the package needs beyond that runtime fails the script.
install_newer() {
  local name=$1 version=$2 suite=$3 pkg=$4 prefix=$5 exe=$6
  local w="$BIN/$name-server"
  if [[ -z "${FORCE:-}" ]] && has_version "$w" "$version"; then
    log "$name-server ok"; return
  fi
  cleanup; apt_setup "$suite"
  local v
  v=$(apt_version "$pkg" "$prefix")
  log "$suite: $pkg $v"
  local dir="$SERVERS/$suite" new="$SERVERS/$suite.new"
  rm -rf "$new"; mkdir -p "$new/debs" "$new/root"
  apt_fetch "$new/debs" "$pkg=$v"
  for d in "$new"/debs/*.deb; do dpkg -x "$d" "$new/root"; done
  rm -rf "$new/debs"
  ln -sf "${exe%-server}-check-rdb" "$new/root/usr/bin/$exe"
  local tlib="$TRIXIE/root/usr/lib/x86_64-linux-gnu"
  local missing
  missing=$("$tlib/ld-linux-x86-64.so.2" --inhibit-cache --library-path "$new/root/usr/lib/x86_64-linux-gnu:$tlib" \
    --list "$new/root/usr/bin/$exe" | grep 'not found' || true)
  [[ -z "$missing" ]] || die "$exe of $suite: libraries missing from trixie's runtime: $missing"
  rm -rf "$dir.old"
  [[ -e "$dir" ]] && mv "$dir" "$dir.old"
  mv "$new" "$dir"
  rm -rf "$dir.old"
  write_wrapper "$w" \
    'b=$(cd "$(dirname "$0")/.." && pwd)' \
    'l="$b/trixie/root/usr/lib/x86_64-linux-gnu"' \
    "exec \"\$l/ld-linux-x86-64.so.2\" --inhibit-cache --library-path \"\$b/$suite/root/usr/lib/x86_64-linux-gnu:\$l\" \"\$b/$suite/root/usr/bin/$exe\" \"\$@\""
  has_version "$w" "$version" || die "$name-server does not report $version: $("$w" --version 2>&1)"
  log "$name-server ok"
}

# write_wrapper PATH LINE...: a small sh script that execs a server.
write_wrapper() {
  local path=$1; shift
  mkdir -p "$(dirname "$path")"
  {
    echo '#!/bin/sh'
    echo '# Generated by scripts/servers.sh; do not edit.'
    printf '%s\n' "$@"
  } >"$path.tmp"
  chmod +x "$path.tmp"
  mv "$path.tmp" "$path"
}

arch=$(dpkg --print-architecture 2>/dev/null || true)
[[ "$arch" == amd64 ]] || die "only amd64 hosts are supported (this is ${arch:-not a Debian system})"
mkdir -p "$BIN"
install_redis70
install_trixie
install_newer redis-8.6 "$REDIS86_VERSION" experimental redis-tools "$REDIS86_DEB" redis-server
install_newer valkey-9.1 "$VALKEY91_VERSION" sid valkey-tools "$VALKEY91_DEB" valkey-server
for w in redis-7.0 redis-8.0 valkey-8.1 redis-8.6 valkey-9.1; do
  printf '%s-server: %s\n' "$w" "$("$BIN/$w-server" --version)"
done
