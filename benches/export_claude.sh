#!/usr/bin/env bash
# `agentmsg export --html` of a Claude Code log against a pi session file of
# the same conversation (benches/gen_claude_session.py), in one run: the
# median CPU time (user+sys) and wall time of RUNS interleaved runs of each,
# and their ratio.
#
#   benches/export_claude.sh [TURNS] [RUNS]      (default 20000 turns, 5 runs)
#
# AGENTMSG_BIN names a binary to measure instead of building one (an older
# build, to compare).
set -euo pipefail
repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$repo"
turns="${1:-20000}"
runs="${2:-5}"
if [[ -n "${AGENTMSG_BIN:-}" ]]; then
    bin="$AGENTMSG_BIN"
else
    cargo build --quiet --release -p agentmsg-cli
    bin="$(cargo metadata --format-version 1 --no-deps | python3 -c 'import json,sys; print(json.load(sys.stdin)["target_directory"])')/release/agentmsg"
fi
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
python3 benches/gen_claude_session.py "$turns" "$work/pi.jsonl" "$work/claude.jsonl"
for ((r = 0; r < runs; r++)); do
    for kind in pi claude; do
        /usr/bin/time -f "$kind %e %U %S" -a -o "$work/times" \
            "$bin" export --html "$work/$kind.jsonl" -o "$work/$kind.html" 2>/dev/null
    done
done
python3 - "$work" <<'PY'
import os, statistics, sys
work = sys.argv[1]
rows = {}
for line in open(os.path.join(work, "times")):
    kind, wall, user, sys_ = line.split()
    rows.setdefault(kind, []).append((float(wall), float(user) + float(sys_)))
med = {k: (statistics.median(w for w, _ in v), statistics.median(c for _, c in v)) for k, v in rows.items()}
for kind in ("pi", "claude"):
    size = os.path.getsize(os.path.join(work, f"{kind}.jsonl")) / 1e6
    page = os.path.getsize(os.path.join(work, f"{kind}.html")) / 1e6
    print(f"{kind:7} file {size:6.1f} MB  page {page:6.1f} MB  wall {med[kind][0]:5.2f} s  cpu {med[kind][1]:5.2f} s")
print(f"claude/pi: wall {med['claude'][0] / med['pi'][0]:.2f}x, cpu {med['claude'][1] / med['pi'][1]:.2f}x")
PY
