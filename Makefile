# The README's commands. Every target does its own set-up (scripts/setup.sh skips
# what is already installed), so `make demo` and `make test` work on a fresh machine.

SHELL := /bin/bash
export PATH := $(CURDIR)/node_modules/.bin:$(or $(CARGO_HOME),$(HOME)/.cargo)/bin:$(PATH)

# What the wasm modules are built from (the native crate is not in them).
CORE_SOURCES := $(shell find crates -type f -not -path "crates/native/*") Cargo.toml Cargo.lock
TEMPLATE := $(shell find pkg-template -type f)
# The wasm-side tests: in Node by wasm-bindgen-test-runner itself (wasm-bindgen-cli installs it
# beside wasm-bindgen, so no wasm-pack), in Chromium through scripts/wasm-browser-test.mjs.
# Every module's feature, so the test that protocol.js names exactly the kinds that cross
# (crates/wasm/src/interop/named.rs) sees the conversation store's too.
WASM_NODE_TEST := cargo test -p toolctx-wasm --target wasm32-unknown-unknown --lib --all-features \
	--config 'target.wasm32-unknown-unknown.runner="wasm-bindgen-test-runner"'
WASM_BROWSER_TEST := cargo test -p toolctx-wasm --target wasm32-unknown-unknown --lib --all-features \
	--config 'target.wasm32-unknown-unknown.runner=["node", "$(CURDIR)/scripts/wasm-browser-test.mjs"]'

# node's test runner: a test file still running after 15 minutes fails, named (Node 20's
# --test-timeout bounds each file's run, not each test; the longest file takes about 2 minutes).
NODE_TEST := node --test --test-reporter=spec --test-timeout=900000

.PHONY: setup setup-build pkg demo bench test test-local test-beside test-local-rest test-rust test-wasm test-js test-deno test-bun test-browser test-edge test-servers test-pack test-playground playground lint clean

## Everything the tests need (the build's tools too).
setup:
	@scripts/setup.sh

## What the build and the demo need, and no more: `make pkg` and `make demo` install the wasm
## target, wasm-bindgen-cli and a few npm packages (scripts/setup.sh's build_packages), no
## runtime, browser, server or test tool.
setup-build:
	@scripts/setup.sh build

## pkg/: the directory `npm pack` publishes (the three wasm modules and their glue + pkg-template/).
pkg: setup-build pkg/.built
	@mkdir -p node_modules && ln -sfn ../pkg node_modules/toolctx

pkg/.built: $(CORE_SOURCES) $(TEMPLATE) scripts/build-wasm.sh scripts/bundle-cli.mjs scripts/bundle-node.mjs README.md CHANGELOG.md
	scripts/build-wasm.sh # pkg/toolctx_{core,conversation,window}_bg.wasm and their .js glue
	cp -R pkg-template/. pkg/
	node scripts/bundle-node.mjs # index.node.js: one file for Node and Bun (fewer modules to load at import)
	cat crates/wasm/src/*.d.ts > pkg/types.d.ts # the public types (index.d.ts); toolctx_*.d.ts stay internal
	node scripts/bundle-cli.mjs # bin/: the CLI and its npm packages in one file (no runtime dependencies)
	cp README.md CHANGELOG.md LICENSE-MIT LICENSE-APACHE pkg/
	@touch $@

## The main job: a small agent loop over this repository, on the default store.
demo: pkg
	node demo/agent.mjs
	node demo/ai-sdk.mjs

## The browser playground (www/): build it and serve it on 127.0.0.1 (vite prints the address).
playground: setup pkg
	vite build --logLevel warn www
	vite preview www

## Benchmarks (not part of `make test`): first every target of the sans-IO core (bench/run.mjs: save/load against the
## raw-I/O floor and the plain-JS seed, the seed's flow and getAllPointers in Node, Deno and Bun; memory per pointer,
## import time, the wasm modules and ranking quality in Node; `node bench/run.mjs --quick` for a short check);
## then storage adapters in every runtime, toolctx/cloudflare in workerd, resume, selection; the window optimiser;
## the installed size of the packed tarball; the shared stores (redis, s3) against their local servers, node fs as the baseline.
bench: setup pkg
	node bench/run.mjs
	node bench/run-adapters.mjs
	node bench/cloudflare.mjs
	deno run -A --unstable-kv --no-check bench/deno-kv.mjs
	node bench/unstorage.mjs
	node bench/resume.mjs
	node bench/select.mjs
	node bench/window.mjs
	node bench/install-size.mjs
	node bench/scaling.mjs

## Every test, in two chains side by side on the 2 cores, each target's seconds printed after
## it (in CI's log, where the time of `make test` goes) and a chain's output printed whole
## when it ends (--output-sync). One chain: the shared stores' suites (test-servers, about 6
## minutes, mostly waiting on their servers: about 40% of a core), then the edge runtimes';
## the other: the rest of the local targets (about 8 minutes with edge's, 6.5 without).
LOCAL_TESTS := test-wasm test-js test-deno test-bun test-browser test-edge test-pack test-playground
BESIDE_TESTS := test-servers test-edge
MAKE_STARTED := $(shell date +%s)
test: setup lint test-rust pkg
	@echo "== setup, lint, test-rust, pkg: $$(( $$(date +%s) - $(MAKE_STARTED) )) s"
	start=$$(date +%s); $(MAKE) --no-print-directory -j2 --output-sync=target test-beside test-local-rest; \
	  status=$$?; echo "== the two chains side by side: $$(( $$(date +%s) - start )) s"; exit $$status

# The targets $(1), one after another, each one's seconds printed after it. Under CI, a target
# still running after TARGET_TIMEOUT seconds is ended (its process group: SIGTERM, then SIGKILL)
# and fails its chain, so a test that never ends shows in CI's log instead of holding CI until
# its time is out. (Not at a terminal: timeout's own process group would not hear Ctrl-C. Each
# runner has a timeout of its own as well: NODE_TEST's a file, tests/deno-test.mjs's and bun's a test.)
TARGET_TIMEOUT := 1500
in_turn = for target in $(1); do start=$$(date +%s); \
	  $(if $(CI),timeout -k 30 $(TARGET_TIMEOUT)) $(MAKE) --no-print-directory $$target; status=$$?; \
	  [ $$status = 124 ] && echo "== $$target: ended after $(TARGET_TIMEOUT) s (TARGET_TIMEOUT)"; \
	  [ $$status = 0 ] || exit 1; echo "== $$target: $$(( $$(date +%s) - start )) s"; done

## Every test but the shared stores', one target after another.
test-local: setup pkg
	$(call in_turn,$(LOCAL_TESTS))

# make test's two chains.
test-beside: setup pkg
	$(call in_turn,$(BESIDE_TESTS))
test-local-rest: setup pkg
	$(call in_turn,$(filter-out $(BESIDE_TESTS),$(LOCAL_TESTS)))

## The JS first: ESLint over every hand-written JS file (eslint.config.js), then tsc over the
## package's JS and its JSDoc types (tsconfig.json), which reads the wasm glue's types from pkg/.
## Both come with the full set-up (package.json), not with setup-build's.
lint: setup pkg
	node scripts/check-paths.mjs # every path a comment or document names exists
	eslint --max-warnings 0 .
	tsc -p .
	cargo fmt --all --check
	cargo clippy --workspace --all-targets -- -D warnings
	RUSTDOCFLAGS="-D warnings" cargo doc --workspace --no-deps # every intra-doc link resolves
	cargo clippy -p toolctx --target wasm32-unknown-unknown --lib -- -D warnings # the native API as the wasm tests build it
	cargo clippy -p toolctx-wasm --target wasm32-unknown-unknown --all-targets --all-features -- -D warnings
	for module in core conversation window; do \
	  cargo clippy -p toolctx-wasm --target wasm32-unknown-unknown --no-default-features --features $$module -- -D warnings || exit 1; done

test-rust: setup-build
	cargo test --workspace

# The wasm-side tests in Node, then in headless Chromium on the main thread and in a
# dedicated worker: wasm-bindgen-test-runner serves the page (WASM_BINDGEN_USE_* chooses
# it) and scripts/wasm-browser-test.mjs drives Chromium to it with playwright-core. Through
# chromedriver (the runner's own headless mode) the page's load often never ended (it stayed
# at "Loading scripts...", then chromedriver timed out waiting for the renderer): one run
# in four in a worker at the start of this round, four in four on the main thread at its
# end, while the same page loaded and passed at once under playwright-core.
test-wasm: setup
	$(WASM_NODE_TEST) # toolctx-wasm's tests (the doc examples are native Rust's: test-rust runs them)
	WASM_BINDGEN_USE_BROWSER=1 $(WASM_BROWSER_TEST)
	WASM_BINDGEN_USE_DEDICATED_WORKER=1 $(WASM_BROWSER_TEST)

test-js: setup pkg
	$(NODE_TEST) tests/js/

test-deno: setup pkg
	deno test -A --no-check tests/js/deno.suite.mjs
	deno test -A --unstable-kv --no-check tests/js/deno-kv.suite.mjs
	deno test -A --no-check tests/js/sqlite.suite.mjs

test-bun: setup pkg
	bun test ./tests/js/bun.suite.mjs
	bun test ./tests/js/sqlite.suite.mjs

test-browser: setup pkg
	node tests/js/browser/run.mjs

## Edge runtimes: real workerd (npm miniflare, on 127.0.0.1) and Vercel's edge-runtime emulator,
## each loading the package through its export condition (workerd, edge-light); toolctx/cloudflare
## over miniflare's local R2, KV and Durable Object simulators.
test-edge: setup pkg
	$(NODE_TEST) tests/edge/

## Shared stores: toolctx/redis, toolctx/s3 and toolctx/postgres against redis-server, s3s-fs and
## PostgreSQL, which the tests start on 127.0.0.1 (free ports; PostgreSQL on a Unix socket too) and
## stop: conformance, 8 writer processes, faults; then all three under Deno and Bun.
## --test-force-exit: a test file ends when its tests have, even if a client it leaked still
## reconnects to a server the suite stopped (a redis test file once never exited).
test-servers: setup pkg
	$(NODE_TEST) --test-force-exit tests/servers/
	deno test -A --no-check tests/servers/deno.suite.mjs
	bun test ./tests/servers/bun.suite.mjs

## The packed tarball, installed into scratch projects: Node, Deno, Bun, a Vite page.
test-pack: setup pkg
	node tests/pack/run.mjs

## The playground in headless Chromium; leaves a screenshot in test-output/playground.png.
test-playground: setup pkg
	node tests/playground/run.mjs

clean:
	rm -rf pkg target node_modules
