#!/usr/bin/env bash
# Whether `agentmsg tree` and `agentmsg check` take time linear in a session's
# size: each runs on two shapes at 10k, 100k and 1M entries, and the time per
# entry is printed beside the 10k one's. Linear work keeps that ratio near 1
# (it falls a little as fixed costs spread); quadratic work multiplies it by
# ten at each step.
#
#   benches/cli_scaling.sh [MAX]     (default 1000000 entries)
#
# The shapes:
#   chain  one path of N entries, each labelled: `tree` once looked every
#          entry's label up by reading the whole session;
#   broom  N/2 entries in a chain, then N/2 leaves under its last: `check`
#          once built every branch (N/2 paths of N/2 entries) before asking
#          whether its budget allowed it.
set -euo pipefail
repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$repo"
max="${1:-1000000}"

cargo build --quiet --release -p agentmsg-cli
bin="$(cargo metadata --format-version 1 --no-deps | python3 -c 'import json,sys; print(json.load(sys.stdin)["target_directory"])')/release/agentmsg"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

make() {
    python3 - "$1" "$2" "$3" <<'PY'
import json, sys
shape, n, path = sys.argv[1], int(sys.argv[2]), sys.argv[3]
with open(path, "w") as f:
    prev = None
    stem = n if shape == "chain" else n // 2
    for i in range(stem):
        f.write(json.dumps({"role": "user", "content": f"m{i}", "timestamp": i, "id": f"e{i}", "parentId": prev}) + "\n")
        prev = f"e{i}"
        if shape == "chain" and i % 10 == 0:
            f.write(json.dumps({"role": "extension", "kind": "label", "data": {"targetId": prev, "label": f"step {i}"}, "id": f"l{i}", "parentId": prev}) + "\n")
    if shape == "broom":
        for j in range(n - stem):
            f.write(json.dumps({"role": "user", "content": f"leaf {j}", "timestamp": j, "id": f"b{j}", "parentId": prev}) + "\n")
PY
}

printf '%-6s %-6s %9s %10s %14s %8s\n' shape cmd entries seconds "us/entry" "vs 10k"
for shape in chain broom; do
    for cmd in tree check; do
        base=""
        for n in 10000 100000 1000000; do
            (( n > max )) && continue
            file="$work/$shape-$n.jsonl"
            [[ -f "$file" ]] || make "$shape" "$n" "$file"
            start=$(date +%s.%N)
            "$bin" "$cmd" "$file" >/dev/null 2>&1 || true
            end=$(date +%s.%N)
            secs=$(python3 -c "print(f'{$end - $start:.3f}')")
            per=$(python3 -c "print(f'{($end - $start) / $n * 1e6:.3f}')")
            [[ -z "$base" ]] && base="$per"
            ratio=$(python3 -c "print(f'{$per / $base:.2f}x')")
            printf '%-6s %-6s %9d %10s %14s %8s\n' "$shape" "$cmd" "$n" "$secs" "$per" "$ratio"
        done
    done
done
