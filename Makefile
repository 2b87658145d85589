# The README's commands. Every target does its own set-up (scripts/setup.sh skips
# what is already installed), so `make demo` and `make test` work on a fresh machine.

SHELL := /bin/bash
export PATH := $(CURDIR)/node_modules/.bin:$(HOME)/.cargo/bin:$(PATH)

WASM_PACK_FLAGS := --target web --out-dir pkg --out-name toolctx_core --no-pack
CORE_SOURCES := $(shell find src -type f) Cargo.toml Cargo.lock
TEMPLATE := $(shell find pkg-template -type f)

.PHONY: setup pkg demo test test-rust test-wasm test-js lint clean

setup:
	@scripts/setup.sh

## pkg/: the directory `npm pack` publishes (wasm-pack output + pkg-template/).
pkg: setup pkg/.built

pkg/.built: $(CORE_SOURCES) $(TEMPLATE) README.md CHANGELOG.md
	wasm-pack build --release $(WASM_PACK_FLAGS)
	rm -f pkg/.gitignore pkg/package.json pkg/README.md
	cp -R pkg-template/. pkg/
	cp README.md CHANGELOG.md LICENSE-MIT LICENSE-APACHE pkg/
	mkdir -p node_modules && ln -sfn ../pkg node_modules/toolctx
	@touch $@

## The main job: a small agent loop over this repository, on the default store.
demo: pkg
	node demo/agent.mjs

## Every test.
test: setup lint test-rust test-wasm test-js

lint:
	cargo fmt --check
	cargo clippy --all-targets -- -D warnings
	cargo clippy --target wasm32-unknown-unknown --all-targets -- -D warnings

test-rust:
	cargo test

test-wasm: setup
	wasm-pack test --node

test-js: pkg
	node --test --test-reporter=spec tests/js/

clean:
	rm -rf pkg target node_modules
