#!/usr/bin/env bash
# The steps of the setup action (action.yml beside this file): put ste on
# PATH from a Debian package, without root when the runner already has
# ste's libraries.
#
#   setup.sh key       the Actions cache key of a package built from the
#                      source tree this action sits in (outputs key, deb-dir)
#   setup.sh build     `make package` in that tree; the .deb into deb-dir
#   setup.sh install   fetch (or take from deb-dir) the .deb, verify it,
#                      unpack it into the tool cache, put its bin/ on PATH
#                      (outputs ste, version)
#
# Environment (the action's inputs; every one optional):
#   STE_SETUP_VERSION     0.2.0: the release asset ste_<version>_<arch>.deb
#                         of tag v<version>
#   STE_SETUP_URL         a .deb's URL; wins over the version as the source
#                         (a version also given is then checked against
#                         the package's)
#   STE_SETUP_SHA256      the .deb's expected sha256
#   STE_SETUP_REPOSITORY  owner/name whose releases hold the asset
#   STE_SETUP_BASE_URL    where releases are downloaded from (default
#                         https://github.com/<repository>/releases/download)
#   STE_SETUP_DEB_DIR     the folder of the package built from source (set
#                         by `key`, filled by `build` or the cache)
# and GitHub's: GITHUB_ACTION_PATH (this folder), GITHUB_PATH,
# GITHUB_OUTPUT, RUNNER_TOOL_CACHE, RUNNER_TEMP.
#
# Downloads with curl, else /usr/bin/python3's urllib, else curl installed
# by apt-get (debian:12 containers have neither). What ste needs and the
# runner lacks (a library it links, git) comes from the package's Depends
# through apt-get, when the step is root or has passwordless sudo; else the
# step fails naming it.
#
# Every check that fails stops the step with the reason, before anything
# is added to $GITHUB_PATH: a job never goes on with no ste, or a broken one.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# install's scratch folder, its unpacked tree, and whether that is kept
# (globals: the EXIT trap reads them after the function is gone)
work='' dir='' keep=''
# Messages carry text from outside (a URL, a package's fields, dpkg-deb's
# and curl's errors). The runner reads workflow commands in a step's
# output: "::name ...::" at the start of a line and "##[name ...]" anywhere
# in one (set-output among them). So a message is one line, and "##[" is
# broken up: nothing a package says can set this action's outputs.
plain() {
  local t=$* cmd='##['
  t=${t//$'\r'/ }
  t=${t//$'\n'/ }
  printf '%s' "${t//"$cmd"/"## ["}"
}
log() { echo "ste setup: $(plain "$*")" >&2; }
die() {
  echo "ste setup: error: $(plain "$*")" >&2
  # An annotation on the run's page too (the same text, % escaped as the
  # runner unescapes a command's data).
  if [ "${GITHUB_ACTIONS:-}" = true ]; then
    local m
    m=$(plain "$*")
    echo "::error title=ste setup::${m//%/%25}"
  fi
  exit 1
}

# NAME VALUE: one output in $GITHUB_OUTPUT's multi-line form. The delimiter
# is fresh and random, so no value (a path, a version read from a file
# someone else wrote) can end it early and forge another output.
output() {
  local name=$1 value=$2 delim
  [ -n "${GITHUB_OUTPUT:-}" ] || { log "output $name: $value (GITHUB_OUTPUT is not set)"; return 0; }
  delim="ghadelimiter_$(od -An -N16 -tx1 /dev/urandom | tr -d ' \n')"
  case "$value" in *"$delim"*) die "output $name contains its delimiter";; esac
  printf '%s<<%s\n%s\n%s\n' "$name" "$delim" "$value" "$delim" >> "$GITHUB_OUTPUT"
}

# How this step may run apt-get: directly as root, through passwordless
# sudo, or not at all (empty, returns 1).
as_root() {
  if [ "$(id -u)" = 0 ]; then
    root=(env DEBIAN_FRONTEND=noninteractive)
  elif command -v sudo > /dev/null 2>&1 && sudo -n true 2> /dev/null; then
    root=(sudo -n env DEBIAN_FRONTEND=noninteractive)
  else
    root=()
    return 1
  fi
}

arch() {
  command -v dpkg > /dev/null 2>&1 ||
    die "dpkg not found: this action installs a Debian package (a Debian or Ubuntu runner or container)"
  dpkg --print-architecture
}

# The source tree this action is part of (deploy/github/setup/ in it).
source_dir() {
  local src
  src=$(cd "${GITHUB_ACTION_PATH:-$here}/../../.." && pwd)
  if ! grep -q '^package:' "$src/Makefile" 2> /dev/null; then
    die "neither url nor version was given, and $src is not ste's source tree (no Makefile with a package target) to build the package from"
  fi
  echo "$src"
}

# ---- key: the cache key of the package built from this source ----------
cmd_key() {
  local src os hash
  src=$(source_dir)
  # The key says for which system the package was built (its Depends name
  # that system's library packages): the distribution and its release, and
  # the architecture; then every source file with its content, in a stable
  # order. Build trees (build*/ at the top, as .dockerignore excludes
  # them), .git, .ste/ and __pycache__ do not change the package.
  os=linux-unknown
  # shellcheck disable=SC1091  # os-release is the system's
  if [ -r /etc/os-release ]; then os=$(. /etc/os-release && echo "${ID:-linux}-${VERSION_ID:-unknown}"); fi
  hash=$(cd "$src" && find . \( -path ./.git -o -path './build*' -o -path ./.ste -o -name __pycache__ \) -prune \
           -o \( -type f -o -type l \) ! -name '*.stelog' -print0 |
         LC_ALL=C sort -z | xargs -0 -r sha256sum | sha256sum | cut -c1-64)
  output key "ste-deb-$os-$(arch)-$hash"
  output deb-dir "${RUNNER_TEMP:-${TMPDIR:-/tmp}}/ste-setup-deb"
  log "source $src: cache key ste-deb-$os-$(arch)-$hash"
}

# ---- build: make package, once per cache key ---------------------------
cmd_build() {
  local src debs missing=() p deb
  src=$(source_dir)
  : "${STE_SETUP_DEB_DIR:?STE_SETUP_DEB_DIR is not set}"
  # The build packages, as the Makefile lists them (BUILD_DEBS, joined over
  # its continuation lines), so that this list cannot drift from it.
  debs=$(awk '/^BUILD_DEBS :?=/ {on = 1} on {line = line " " $0; if ($0 !~ /\\$/) on = 0} END {print line}' "$src/Makefile" |
         sed -e 's/BUILD_DEBS :\{0,1\}=//' -e 's/\\//g')
  [ -n "${debs// /}" ] || die "$src/Makefile has no BUILD_DEBS: cannot tell which packages build ste"
  for p in $debs; do
    dpkg-query -W -f='${Status}\n' "$p" 2> /dev/null | grep -q 'ok installed' || missing+=("$p")
  done
  if [ ${#missing[@]} -gt 0 ]; then
    as_root || die "building ste needs ${missing[*]}; this step cannot install them (not root, no passwordless sudo)"
    log "installing the build packages: ${missing[*]}"
    "${root[@]}" apt-get update -qq >&2
    "${root[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" >&2 ||
      die "apt-get could not install ${missing[*]}"
  fi
  log "building the package in $src (make package)"
  make -C "$src" package >&2 || die "make package failed in $src (above)"
  # The newest, should an older version's package still be in build/.
  # shellcheck disable=SC2012  # names CPack wrote: ste_<version>_<arch>.deb
  deb=$(ls -t "$src"/build/ste_*_"$(arch)".deb 2> /dev/null | head -1 || true)
  [ -n "$deb" ] || die "make package wrote no $src/build/ste_*_$(arch).deb"
  rm -rf "$STE_SETUP_DEB_DIR"
  mkdir -p "$STE_SETUP_DEB_DIR"
  cp "$deb" "$STE_SETUP_DEB_DIR/"
  log "built $(basename "$deb")"
}

# ---- install -------------------------------------------------------------

# The download without curl: prints the HTTP status as curl -w does, exits
# 22 (curl's status for an HTTP error) on one.
py_download=$(cat <<'PY'
import shutil, sys, urllib.error, urllib.request
url, out = sys.argv[1], sys.argv[2]
try:
    with urllib.request.urlopen(url, timeout=60) as r, open(out, "wb") as f:
        shutil.copyfileobj(r, f)
        print(r.status)
except urllib.error.HTTPError as e:
    print(e.code)
    sys.exit(22)  # curl's exit status for an HTTP error
except Exception as e:  # no HTTP answer at all: DNS, refused, TLS, a timeout
    print("000")
    print(e, file=sys.stderr)
    sys.exit(1)
PY
)

# URL FILE: download with what this machine has, saying which.
download() {
  local url=$1 file=$2 code rc=0
  if ! command -v curl > /dev/null 2>&1 && [ ! -x /usr/bin/python3 ]; then
    # debian:12 containers have neither.
    as_root || die "cannot download $url: no curl, no /usr/bin/python3, and this step cannot install curl (not root, no passwordless sudo)"
    log "no curl and no python3 here: installing curl with apt-get"
    "${root[@]}" apt-get update -qq >&2
    "${root[@]}" apt-get install -y -qq --no-install-recommends curl ca-certificates >&2 ||
      die "apt-get could not install curl"
  fi
  if command -v curl > /dev/null 2>&1; then
    log "downloading $url (curl)"
    # --fail: an HTTP error is an error, not an error page saved as the
    # .deb; -w: the status, to say which.
    code=$(curl --fail --location --silent --show-error --retry 3 --connect-timeout 30 \
             -w '%{http_code}' -o "$file" "$url" 2> "$file.err") || rc=$?
  else
    log "downloading $url (python3 urllib: no curl here)"
    code=$(/usr/bin/python3 -c "$py_download" "$url" "$file" 2> "$file.err") || rc=$?
  fi
  [ "$rc" = 0 ] && return 0
  case "$code" in
    404) die "no such release asset: $url (HTTP 404)" ;;
    [45][0-9][0-9]) die "download failed: $url (HTTP $code)" ;;
    # no HTTP answer (000), or a transfer cut short: curl's last try's error
    *) die "download failed: $url: $(tail -n 1 "$file.err")" ;;
  esac
}

# The repository whose releases hold the package: the input (default
# github.action_repository), else the runner's variable, else read off
# this action's own path: the runner puts an action used as owner/name/...@ref
# under .../_actions/owner/name/ref/ (github.action_repository has been seen
# empty inside composite actions).
repository() {
  local r=${STE_SETUP_REPOSITORY:-${GITHUB_ACTION_REPOSITORY:-}}
  if [ -z "$r" ] && [[ "${GITHUB_ACTION_PATH:-}" =~ /_actions/([^/]+)/([^/]+)/[^/]+/ ]]; then
    r="${BASH_REMATCH[1]}/${BASH_REMATCH[2]}"
  fi
  [ -n "$r" ] || die "version $version given but no repository to download it from: set the repository input (owner/name)"
  [[ "$r" =~ ^[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+$ ]] || die "repository '$r' is not owner/name"
  echo "$r"
}

# VAR FIELD: a control field of the package ($deb) into VAR; a control
# file dpkg-deb cannot parse fails the step with its reason.
read_field() {
  local value
  value=$(dpkg-deb -f "$deb" "$2" 2> "$work/err") ||
    die "$source_name: dpkg-deb cannot read its $2 field: $(cat "$work/err")"
  printf -v "$1" '%s' "$value"
}

cmd_install() {
  local version=${STE_SETUP_VERSION:-} url=${STE_SETUP_URL:-} want_sum=${STE_SETUP_SHA256:-}
  local machine base deb source_name got_sum pkg_name pkg_arch pkg_version pkg_depends upstream
  local tools staging missing reported line
  machine=$(arch)
  version=${version#v}  # v0.2.0 names the same release
  if [ -n "$version" ] && ! [[ "$version" =~ ^[0-9][A-Za-z0-9.+~-]*$ ]]; then
    die "version '$version' is not a version (e.g. 0.2.0)"
  fi
  want_sum=$(tr 'A-F' 'a-f' <<< "$want_sum")
  if [ -n "$want_sum" ] && ! [[ "$want_sum" =~ ^[0-9a-f]{64}$ ]]; then
    die "sha256 '$want_sum' is not 64 hexadecimal digits"
  fi
  work=$(mktemp -d "${RUNNER_TEMP:-${TMPDIR:-/tmp}}/ste-setup-XXXXXX")
  trap 'rm -rf "$work"' EXIT

  # Where the package comes from: url, else the release of version, else
  # the package built from source (the steps before this one).
  if [ -n "$url" ]; then
    source_name=$url
  elif [ -n "$version" ]; then
    base=${STE_SETUP_BASE_URL:-}
    if [ -z "$base" ]; then
      base="https://github.com/$(repository)/releases/download"
    fi
    url="${base%/}/v$version/ste_${version}_${machine}.deb"
    source_name=$url
  fi
  if [ -n "$url" ]; then
    deb="$work/ste.deb"
    download "$url" "$deb"
  else
    : "${STE_SETUP_DEB_DIR:?neither url nor version given, and no package built from source (STE_SETUP_DEB_DIR unset)}"
    local built=("$STE_SETUP_DEB_DIR"/ste_*.deb)
    [ -e "${built[0]}" ] || die "no package was built from source into $STE_SETUP_DEB_DIR"
    [ ${#built[@]} = 1 ] || die "more than one package in $STE_SETUP_DEB_DIR: ${built[*]}"
    deb=${built[0]}
    source_name=$deb
    log "installing the package built from source: $(basename "$deb")"
  fi

  # Verified before any of its bytes are unpacked: the checksum first.
  got_sum=$(sha256sum "$deb" | cut -c1-64)
  if [ -n "$want_sum" ] && [ "$got_sum" != "$want_sum" ]; then
    die "sha256 mismatch for $source_name: expected $want_sum, got $got_sum"
  fi
  dpkg-deb --info "$deb" > /dev/null 2> "$work/err" ||
    die "$source_name is not a Debian package (truncated or damaged?): $(tr '\n' ' ' < "$work/err")"
  read_field pkg_name Package
  [ "$pkg_name" = ste ] || die "$source_name is the package '$pkg_name', not ste"
  read_field pkg_arch Architecture
  [ "$pkg_arch" = "$machine" ] || die "package is for $pkg_arch, this runner is $machine ($source_name)"
  read_field pkg_version Version
  read_field pkg_depends Depends
  [[ "$pkg_version" =~ ^([0-9]+:)?[0-9][A-Za-z0-9.+~-]*$ ]] || die "$source_name has a bad Version: '$pkg_version'"
  upstream=${pkg_version#*:}
  upstream=${upstream%-*}
  if [ -n "$version" ] && [ "$upstream" != "$version" ]; then
    die "$source_name is ste $pkg_version, not the version $version asked for"
  fi
  log "package ste $pkg_version ($pkg_arch), sha256 $got_sum"

  # Unpacked without root (no dpkg database, no maintainer scripts) into
  # the runner's tool cache, as actions/tool-cache lays it out
  # (<tool>/<version>/<arch>): ste finds its preload library and
  # integrations relative to its own binary. Into a fresh folder beside the
  # target first: a package that will not unpack leaves nothing behind.
  tools=${RUNNER_TOOL_CACHE:-}
  if [ -z "$tools" ] || ! mkdir -p "$tools/ste/$pkg_version" 2> /dev/null; then
    # (a container job as a user who may not write the mounted tool cache)
    tools=${RUNNER_TEMP:-${TMPDIR:-/tmp}}
    log "no writable tool cache${RUNNER_TOOL_CACHE:+ ($RUNNER_TOOL_CACHE)}: unpacking under $tools"
    mkdir -p "$tools/ste/$pkg_version"
  fi
  tools=$(cd "$tools" && pwd)
  dir="$tools/ste/$pkg_version/$pkg_arch"
  staging=$(mktemp -d "$tools/ste/$pkg_version/.$pkg_arch.XXXXXX")
  if ! dpkg-deb -x "$deb" "$staging" 2> "$work/err"; then
    rm -rf "$staging"
    die "$source_name is not a Debian package that unpacks (truncated or damaged?): $(tr '\n' ' ' < "$work/err")"
  fi
  if [ ! -x "$staging/usr/bin/ste" ]; then
    rm -rf "$staging"
    die "$source_name has no usr/bin/ste"
  fi
  rm -rf "$dir"
  mv "$staging" "$dir"
  # From here a failing check removes the unpacked tree too.
  trap 'rm -rf "$work"; [ -n "$keep" ] || rm -rf "$dir"' EXIT

  # What ste needs from the system: the libraries it and the preload
  # library link (ldd), and git (run, not linked: ldd cannot see it).
  missing_deps() {
    local f
    for f in "$dir/usr/bin/ste" "$dir"/usr/lib/ste/*.so; do
      [ -e "$f" ] || continue
      # a static or non-ELF file: ldd fails, and nothing is missing
      (ldd "$f" 2> /dev/null || true) | awk '/=> not found/ {print $1}'
    done | sort -u
    command -v git > /dev/null 2>&1 || echo git
  }
  missing=$(missing_deps)
  if [ -n "$missing" ]; then
    reported=$(paste -sd, <<< "$missing" | sed 's/,/, /g')
    as_root || die "ste needs what this runner lacks: $reported; this step cannot install it (not root, no passwordless sudo): install the package's Depends first: $pkg_depends"
    log "missing here: $reported; installing the package's Depends with apt-get"
    "${root[@]}" apt-get update -qq >&2
    # satisfy (apt >= 1.9) takes the Depends field as it is, versions and
    # alternatives included.
    "${root[@]}" apt-get satisfy -y -qq --no-install-recommends "$pkg_depends" >&2 ||
      die "apt-get could not install the package's Depends ($pkg_depends): is it built for this distribution?"
    missing=$(missing_deps)
    [ -z "$missing" ] || die "still missing after installing the Depends: $(paste -sd, <<< "$missing" | sed 's/,/, /g')"
  fi

  line=$("$dir/usr/bin/ste" --version 2>&1 | head -1) || die "$dir/usr/bin/ste --version failed: $line"
  [ "$(awk '{print $2}' <<< "$line")" = "$upstream" ] ||
    die "ste --version says '$line', the package is version $upstream"
  keep=1

  if [ -n "${GITHUB_PATH:-}" ]; then
    echo "$dir/usr/bin" >> "$GITHUB_PATH"
  else
    log "GITHUB_PATH is not set: add $dir/usr/bin to PATH yourself"
  fi
  output ste "$dir/usr/bin/ste"
  output version "$upstream"
  log "$line at $dir/usr/bin/ste, on PATH for the next steps"
}

case "${1:-}" in
  key) cmd_key ;;
  build) cmd_build ;;
  install) cmd_install ;;
  *) echo "usage: setup.sh key|build|install (read the top of this file)" >&2; exit 2 ;;
esac
