#!/usr/bin/env bash
# The test suite, with the tests that skipped counted at the end:
#   scripts/test.sh                   # cargo test --workspace --all-features
#   scripts/test.sh -p agentmsg-cli   # any other `cargo test` arguments
#
# A test that needs what this machine lacks (the conformance data in
# ../shared, Chromium, PostgreSQL, pi's npm package, node) prints a line with
# `SKIPPED` and returns, and libtest counts it as passed: `test result: ok`
# says nothing of it. This prints how many skipped, and which, after cargo's
# own summary. (Under CI, or with AGENTMSG_REQUIRE_CONFORMANCE and the like
# set, those tests fail instead of skipping; see the README.)
set -uo pipefail
if [[ $# -eq 0 ]]; then
    set -- --workspace --all-features
fi
log="$(mktemp)"
trap 'rm -f "$log"' EXIT
cargo test "$@" 2>&1 | tee "$log"
status=${PIPESTATUS[0]}
# One line per skipped test (or part of one); the conformance banner, which
# announces them, is not one.
skipped="$(grep -a 'SKIPPED' "$log" | grep -av 'each says so below' | sed -E 's/^[=*[:space:]]+//; s/[=*[:space:]]+$//' | sort -u)"
echo
if [[ -z "$skipped" ]]; then
    echo "scripts/test.sh: no test skipped"
else
    count="$(printf '%s\n' "$skipped" | wc -l)"
    echo "scripts/test.sh: $count tests SKIPPED (each counted as passed above):"
    printf '%s\n' "$skipped" | sed 's/^/  /'
fi
exit "$status"
