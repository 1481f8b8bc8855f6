#!/usr/bin/env bash
# The public API of the facade (`agentmsg`) and of the runtime
# (`agentmsg-runtime`), every feature on, one item a line as cargo-public-api
# lists it, kept in api/*.txt so that a change to the public API shows in
# review as a change to those files.
#
#   scripts/public_api.sh           rewrite api/*.txt from the code
#   scripts/public_api.sh --check   fail (and print the diff) when they differ
#
# CI runs the check (.ci/run). After changing the public API on purpose, run
# the first form and commit api/*.txt with the change.
#
# cargo-public-api reads rustdoc's JSON output, which is unstable: stable
# rustdoc writes it when RUSTC_BOOTSTRAP is set for the documented crate, as
# cargo-semver-checks does, so no nightly toolchain is needed. The JSON's
# format changes between Rust releases, so the tool is pinned to the version
# that reads this toolchain's (0.52.0: format 57, Rust 1.95); a new Rust may
# need a new pin, which the tool says when it cannot read the file.
set -euo pipefail
repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$repo"
check=false
if [[ "${1:-}" == "--check" ]]; then
    check=true
fi
version=0.52.0
if [[ "$(cargo public-api --version 2>/dev/null || true)" != "cargo-public-api $version" ]]; then
    cargo install cargo-public-api --version "$version" --locked
fi
target_dir="$(cargo metadata --format-version 1 --no-deps | python3 -c 'import json,sys; print(json.load(sys.stdin)["target_directory"])')"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
status=0
for package in agentmsg agentmsg-runtime; do
    crate="${package//-/_}"
    RUSTC_BOOTSTRAP="$crate" cargo rustdoc --quiet -p "$package" --lib --all-features \
        -- -Z unstable-options --output-format json
    cargo public-api --color never --rustdoc-json "$target_dir/doc/$crate.json" \
        --omit blanket-impls,auto-trait-impls,auto-derived-impls >"$work/$package.txt"
    if $check; then
        if ! diff -u "api/$package.txt" "$work/$package.txt"; then
            echo "error: the public API of $package differs from api/$package.txt" >&2
            status=1
        fi
    else
        mkdir -p api
        cp "$work/$package.txt" "api/$package.txt"
    fi
done
if ((status)); then
    echo "       if the change is meant, run scripts/public_api.sh and commit api/" >&2
fi
exit "$status"
