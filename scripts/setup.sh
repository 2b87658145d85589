#!/usr/bin/env bash
# Installs what the build and the tests need, skipping whatever is already right.
# Safe to run any number of times; on a fresh machine of this kind it is the whole set-up.
#   scripts/setup.sh         everything: the build's tools, then the tests' and the linters'
#                            (make test, make lint: eslint and tsc are among package.json's)
#   scripts/setup.sh build   what make pkg and make demo need, and no more: the wasm target,
#                            wasm-bindgen-cli and the few npm packages of build_packages below
#                            (a few minutes; none of the runtimes, browsers, servers and test
#                            tools, which only the tests use)
set -euo pipefail
cd "$(dirname "$0")/.."
only_build=false
[ "${1:-}" = "build" ] && only_build=true
export PATH="${CARGO_HOME:-$HOME/.cargo}/bin:$PATH"

# The npm packages the build and the demo import, installed at the versions package.json and
# package-lock.json pin: scripts/build-wasm.sh runs binaryen's wasm-opt; scripts/bundle-*.mjs
# import esbuild, and bundle-cli.mjs bundles what pkg-template/bin/ imports; demo/ai-sdk.mjs
# (with tests/js/ai-sdk.mjs) and toolctx/ai-sdk import `ai`. A new import in bin/ goes here too.
build_packages=(
  binaryen esbuild
  commander cli-table3 cli-progress ms picocolors @modelcontextprotocol/sdk
  ai
)

say() { printf '[setup] %s\n' "$*"; }

cargo_install() { # name version-or-empty [cargo install options]
  local name=$1 version=${2:-}
  local args=(--locked "$name")
  [ -n "$version" ] && args+=(--version "$version")
  # --locked pins the tool's own lockfile; if the registry lacks one of its pinned
  # dependencies, resolve fresh ones instead.
  cargo install "${args[@]}" "${@:3}" || cargo install "${args[@]:1}" "${@:3}"
}

if ! rustup target list --installed | grep -qx wasm32-unknown-unknown; then
  say "adding the wasm32-unknown-unknown target"
  rustup target add wasm32-unknown-unknown
fi

# npm: make pkg and make demo install build_packages alone, into node_modules as npm lays
# them out for the whole of package.json, so that the full install later (make test) only adds.
# The stamps: .toolctx-setup, every dev dependency; .toolctx-setup-build, build_packages only.
full_stamp=node_modules/.toolctx-setup
build_stamp=node_modules/.toolctx-setup-build
fresh() { [ -f "$1" ] && [ ! package.json -nt "$1" ] && [ ! package-lock.json -nt "$1" ]; }
# Not `npm ci`: the registry here serves only this platform's builds of deno, bun and
# rollup, so the lock cannot list the others and `npm ci` would call it out of sync.
npm_install() { npm install --no-save --no-audit --no-fund --loglevel=error "$@"; }

npm_setup() {
  if $only_build && [ ! -f "$full_stamp" ]; then
    # package.json with only build_packages among its devDependencies, which npm installs at
    # the versions of the whole lock (it drops the packages nothing then needs).
    manifest=$(node -e '
      const p = JSON.parse(require("fs").readFileSync("package.json", "utf8"));
      const dev = {};
      for (const name of process.argv.slice(1)) {
        if (!p.devDependencies?.[name]) throw new Error(`scripts/setup.sh: ${name} is not among package.json'"'"'s devDependencies`);
        dev[name] = p.devDependencies[name];
      }
      console.log(JSON.stringify({ ...p, devDependencies: dev }, null, 2));' "${build_packages[@]}")
    if ! fresh "$build_stamp" || [ "$(cat "$build_stamp")" != "$manifest" ]; then
      say "installing the npm packages of the build and the demo: ${build_packages[*]}"
      work=$(mktemp -d)
      trap 'rm -rf "$work"' EXIT
      printf '%s\n' "$manifest" > "$work/package.json"
      cp package-lock.json "$work/"
      (cd "$work" && npm_install)
      rm -rf node_modules
      mv "$work/node_modules" node_modules
      printf '%s\n' "$manifest" > "$build_stamp"
    fi
  elif ! fresh "$full_stamp"; then
    say "installing npm dev dependencies"
    npm_install
    rm -f "$build_stamp"
    touch "$full_stamp"
  fi
}

# better-sqlite3 (toolctx/sqlite's tests under Node 20, which has no node:sqlite) ships no
# binary this network can fetch, so npm compiles SQLite for it: about 110 s of CPU. The first
# build is kept as the local prebuilt binary its installer (prebuild-install) looks for before
# any download, so later installs (a fresh clone's) unpack it in a second.
prebuilds="${XDG_CACHE_HOME:-$HOME/.cache}/toolctx/prebuilds"
export npm_config_better_sqlite3_local_prebuilds="$prebuilds"
keep_prebuilt() {
  local addon=node_modules/better-sqlite3/build/Release/better_sqlite3.node version name
  [ -f "$addon" ] || return 0
  # Only a binary this node loads (one installed under another Node would be kept under
  # this one's ABI, and trusted by every later install).
  node -e 'new (require("./node_modules/better-sqlite3"))(":memory:").close()' 2>/dev/null || return 0
  version=$(node -p 'require("./node_modules/better-sqlite3/package.json").version')
  name="better-sqlite3-v$version-node-v$(node -p 'process.versions.modules')-$(node -p 'process.platform')-$(node -p 'process.arch').tar.gz"
  [ -f "$prebuilds/$name" ] && return 0
  mkdir -p "$prebuilds"
  tar czf "$prebuilds/$name.tmp" -C node_modules/better-sqlite3 build/Release/better_sqlite3.node
  mv "$prebuilds/$name.tmp" "$prebuilds/$name"
}

# The npm packages download while wasm-bindgen-cli compiles.
npm_setup &
npm_pid=$!

# wasm-bindgen-cli must match the wasm-bindgen in Cargo.lock exactly.
[ -f Cargo.lock ] || cargo generate-lockfile
want=$(awk '/^name = "wasm-bindgen"$/ { getline; gsub(/version = |"/, ""); print; exit }' Cargo.lock)
have=$(wasm-bindgen --version 2>/dev/null | awk '{print $2}' || true)
if [ "$have" != "$want" ]; then
  say "installing wasm-bindgen-cli $want (found: ${have:-none})"
  # Without its default TLS features (no ring, no rustls: its only HTTP is to a local
  # WebDriver) and at opt-level 0: about 75 s of CPU to build instead of 200 at opt-level 3,
  # and wasm-bindgen then takes 0.5 s instead of 0.1 s over a module, with the same output.
  (export CARGO_PROFILE_RELEASE_OPT_LEVEL=0; cargo_install wasm-bindgen-cli "$want" --no-default-features)
fi

wait "$npm_pid"
keep_prebuilt || say "could not keep better-sqlite3's build in $prebuilds (the next install compiles it again)"

$only_build && exit 0

# The tests' tools from here on (the wasm tests' runner came with wasm-bindgen-cli above).

# Debian's Chromium for the browser tests, driven by playwright-core (never a tool's own
# download).
if ! command -v chromium >/dev/null; then
  say "installing Debian's chromium"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq chromium >/dev/null
fi

# The servers the shared-store adapters are tested against (tests/servers/, make test-servers),
# all started by the tests on 127.0.0.1 only: Debian's redis-server and postgresql, and s3s-fs
# (an S3-compatible server over a folder; about 4 min to build once, then reused).
if ! command -v redis-server >/dev/null; then
  say "installing Debian's redis-server"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq redis-server >/dev/null
fi
# Debian's PostgreSQL server for toolctx/postgres's tests (tests/servers/local.mjs runs
# initdb and pg_ctl over a temporary folder, as the postgres user when run as root; the
# cluster the package may make for itself is not used).
if ! ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1; then
  say "installing Debian's postgresql"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq postgresql >/dev/null
fi
if [ ! -x "${CARGO_HOME:-$HOME/.cargo}/bin/s3s-fs" ]; then
  say "installing s3s-fs 0.14.1"
  cargo install s3s-fs --version 0.14.1 --features binary --locked
fi
