#!/usr/bin/env bash
# Installs what the build and the tests need, skipping whatever is already right.
# Safe to run any number of times; on a fresh machine of this kind it is the whole set-up.
#   scripts/setup.sh         everything: the build's tools, then the tests' (make test)
#   scripts/setup.sh build   the build's tools only: the wasm target, wasm-bindgen-cli and the
#                            npm dev dependencies (make pkg, make demo: a few minutes, not
#                            the browser, the servers and wasm-pack, which only the tests use)
set -euo pipefail
cd "$(dirname "$0")/.."
only_build=false
[ "${1:-}" = "build" ] && only_build=true

say() { printf '[setup] %s\n' "$*"; }

cargo_install() { # name version-or-empty
  local name=$1 version=${2:-}
  local args=(--locked "$name")
  [ -n "$version" ] && args+=(--version "$version")
  # --locked pins the tool's own lockfile; if the registry lacks one of its pinned
  # dependencies, resolve fresh ones instead.
  cargo install "${args[@]}" || cargo install "${args[@]:1}"
}

if ! rustup target list --installed | grep -qx wasm32-unknown-unknown; then
  say "adding the wasm32-unknown-unknown target"
  rustup target add wasm32-unknown-unknown
fi

# wasm-bindgen-cli must match the wasm-bindgen in Cargo.lock exactly.
[ -f Cargo.lock ] || cargo generate-lockfile
want=$(awk '/^name = "wasm-bindgen"$/ { getline; gsub(/version = |"/, ""); print; exit }' Cargo.lock)
have=$(wasm-bindgen --version 2>/dev/null | awk '{print $2}' || true)
if [ "$have" != "$want" ]; then
  say "installing wasm-bindgen-cli $want (found: ${have:-none})"
  cargo_install wasm-bindgen-cli "$want"
fi

# npm dev tools (binaryen's wasm-opt for the build; the runtimes, frameworks and test tools).
stamp=node_modules/.toolctx-setup
if [ ! -f "$stamp" ] || [ package-lock.json -nt "$stamp" ] || [ package.json -nt "$stamp" ]; then
  say "installing npm dev dependencies"
  # Not `npm ci`: the registry here serves only this platform's builds of deno, bun and
  # rollup, so the lock cannot list the others and `npm ci` would call it out of sync.
  npm install --no-save --no-audit --no-fund --loglevel=error
  touch "$stamp"
fi

$only_build && exit 0

# The tests' tools from here on.
if ! command -v wasm-pack >/dev/null; then
  say "installing wasm-pack"
  cargo_install wasm-pack
fi

# Debian's Chromium and ChromeDriver for the browser tests (never a tool's own download).
if ! command -v chromium >/dev/null || ! command -v chromedriver >/dev/null; then
  say "installing Debian's chromium and chromium-driver"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq chromium chromium-driver >/dev/null
fi

# The servers the shared-store adapters are tested against (tests/servers/, make test-servers),
# both started by the tests on 127.0.0.1 only: Debian's redis-server, and s3s-fs (an
# S3-compatible server over a folder; about 4 min to build once, then reused).
if ! command -v redis-server >/dev/null; then
  say "installing Debian's redis-server"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq redis-server >/dev/null
fi
if [ ! -x "$HOME/.cargo/bin/s3s-fs" ]; then
  say "installing s3s-fs 0.14.1"
  cargo install s3s-fs --version 0.14.1 --features binary --locked
fi
