#!/usr/bin/env bash
# `agentmsg export --html` on sessions of 100,000 entries: the command's time
# and peak RSS, and how long the page takes to become usable in headless
# Chromium (with `--browser`).
#
#   benches/export_memory.sh [--browser] [ENTRIES]     (default 100000)
#
# Two sessions of ENTRIES entries each:
#   pi     pi's format, made as benches/pi_session.sh makes it (one path of
#          user turns, replies with thinking and a tool call, tool results;
#          about 66 MB at 100,000 entries);
#   big    an agentmsg transcript of about 210 MB (the size issue 15 names):
#          user turns, replies with thinking, Markdown, a code block and a
#          tool call, long tool results, a branch every 1,000 entries, a
#          compaction every 5,000 and a label every 500.
# The command reads a file twice and holds a skeleton of each entry, not the
# session, so its peak must stay under LIMIT_MB (default 96) whatever the
# file's size; `agentmsg context` (its leaf's path only) is shown beside it.
# AGENTMSG_BIN names a binary to measure instead of building one (an older
# build, to compare).
set -euo pipefail
repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$repo"
browser=0
if [[ "${1:-}" == "--browser" ]]; then
    browser=1
    shift
fi
entries="${1:-100000}"
limit_kb=$((${LIMIT_MB:-96} * 1024))

if [[ -n "${AGENTMSG_BIN:-}" ]]; then
    bin="$AGENTMSG_BIN"
else
    cargo build --quiet --release -p agentmsg-cli
    bin="$(cargo metadata --format-version 1 --no-deps | python3 -c 'import json,sys; print(json.load(sys.stdin)["target_directory"])')/release/agentmsg"
fi
work="${AGENTMSG_BENCH_DIR:-$(mktemp -d)}"
mkdir -p "$work"
[[ -n "${AGENTMSG_BENCH_DIR:-}" ]] || trap 'rm -rf "$work"' EXIT

[[ -f "$work/pi.jsonl" ]] || python3 benches/gen_pi_session.py "$entries" "$work/pi.jsonl"

[[ -f "$work/big.jsonl" ]] || python3 - "$entries" "$work/big.jsonl" <<'PY'
import json, sys
n, path = int(sys.argv[1]), sys.argv[2]
# About 2,100 bytes an entry: 210 MB at 100,000 entries.
result = ("    let total = items.iter().map(|i| i.price * i.count).sum::<u64>();\n" * 80)[:4900]
t0 = 1765233665000
with open(path, "w") as f:
    parent = None
    i = 0
    def put(obj):
        f.write(json.dumps(obj, separators=(",", ":")) + "\n")
    while i < n:
        eid = f"e{i}"
        k = i % 3
        t = t0 + i * 1000
        if i % 500 == 499 and parent:
            put({"role": "extension", "kind": "label", "data": {"targetId": parent, "label": f"step {i}"}, "id": eid, "parentId": parent})
        elif i % 5000 == 4999:
            put({"role": "compactionSummary", "summary": f"## Summary to {i}\n\nWe read files and **fixed** things." * 4, "tokensBefore": 150000,
                 "firstKeptId": f"e{i - 300 - (i - 300) % 3}", "timestamp": t, "id": eid, "parentId": parent})
        elif k == 0:
            put({"role": "user", "content": f"Please look at `src/f{i}.rs` and fix the **total** — step {i}. " * 6, "timestamp": t, "id": eid, "parentId": parent})
        elif k == 1:
            put({"role": "assistant", "content": [
                    {"type": "thinking", "thinking": "The total is computed twice; I should read the file first. " * 6},
                    {"type": "text", "text": f"Reading it:\n\n```rust\nfn total(items: &[Item]) -> u64 {{ {i} }}\n```\n\n- first\n- second"},
                    {"type": "toolCall", "id": f"c{i}", "name": "read", "arguments": {"path": f"src/f{i}.rs", "offset": 0, "limit": 200}}],
                 "api": "anthropic-messages", "provider": "anthropic", "model": "claude-sonnet-4-5",
                 "usage": {"input": 1200, "output": 80, "cacheRead": 900, "cacheWrite": 0, "totalTokens": 2180,
                           "cost": {"input": 0.0036, "output": 0.0012, "cacheRead": 0.00027, "cacheWrite": 0, "total": 0.00507}},
                 "stopReason": "toolUse", "timestamp": t, "id": eid, "parentId": parent})
        else:
            put({"role": "toolResult", "toolCallId": f"c{i-1}", "toolName": "read", "content": [{"type": "text", "text": result}],
                 "isError": i % 97 == 0, "timestamp": t, "id": eid, "parentId": parent})
        # Every 1,000 entries, another reply to the last user turn: a branch
        # left behind (one entry), the path going on from the first reply.
        if i % 1000 == 1 and i + 1 < n:
            i += 1
            put({"role": "assistant", "content": [{"type": "text", "text": f"An abandoned answer at {i}."}],
                 "api": "anthropic-messages", "provider": "anthropic", "model": "claude-sonnet-4-5",
                 "usage": {"input": 1000, "output": 10, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 1010},
                 "stopReason": "stop", "timestamp": t + 1, "id": f"e{i}", "parentId": parent})
        parent = eid
        i += 1
PY

failed=0
printf '%-6s %8s %10s %8s %12s %14s\n' session MB command seconds "peak RSS MB" "page MB"
for name in pi big; do
    file="$work/$name.jsonl"
    mb=$(( $(stat -c %s "$file") / 1024 / 1024 ))
    read -r secs kb < <(/usr/bin/time -f "%e %M" "$bin" export "$file" --html -o "$work/$name.html" 2>&1 >/dev/null | tail -1)
    page=$(( $(stat -c %s "$work/$name.html") / 1024 / 1024 ))
    printf '%-6s %8d %10s %8s %12d %14d\n' "$name" "$mb" export "$secs" $((kb / 1024)) "$page"
    if ((kb > limit_kb)); then
        echo "error: export of $name peaked over $((limit_kb / 1024)) MB" >&2
        failed=1
    fi
    read -r secs kb < <(/usr/bin/time -f "%e %M" "$bin" context "$file" 2>&1 >/dev/null | tail -1)
    printf '%-6s %8d %10s %8s %12d\n' "$name" "$mb" context "$secs" $((kb / 1024))
done

if ((browser)); then
    for name in pi big; do
        AGENTMSG_BIG_PAGE="$work/$name.html" cargo test --quiet -p agentmsg-cli --all-features \
            --test command -- --ignored --nocapture a_big_page_stays_usable 2>&1 | grep -E "^page|panicked|FAILED" || true
    done
fi
exit "$failed"
