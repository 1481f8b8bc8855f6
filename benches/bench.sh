#!/usr/bin/env bash
# `cargo bench` with the benches' build settings (benches/README.md, "Build
# settings"): every loop aligned to 64 bytes, so where a loop lands does not
# decide how fast the two sides of a ratio run. Arguments go to `cargo bench`:
#   benches/bench.sh --bench transcript -- zzz
#
# The flag lives here rather than in .cargo/config.toml, where every build in
# the repository (tests, clippy, `cargo install --path cli`) would inherit it.
# Its own target directory (target/bench unless CARGO_TARGET_DIR is set) keeps
# the flagged build from invalidating the unflagged one. `RUSTFLAGS` in the
# environment is kept, the flag added to it.
set -euo pipefail
repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
export RUSTFLAGS="${RUSTFLAGS:+$RUSTFLAGS }-C llvm-args=-align-loops=64"
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$repo/target/bench}"
exec cargo bench --manifest-path "$repo/Cargo.toml" "$@"
