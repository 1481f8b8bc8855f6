#!/usr/bin/env bash
# Peak memory of `agentmsg check`, `stats` and `repair` on a large transcript: they read a
# JSON Lines file one line at a time, so their peak RSS must stay bounded by the
# longest line plus what a later line can change, whatever the file's size. Then
# `context` and `project` on a session tree of the same size whose leaf's path is
# one copy: they read the file along that path only (ids and parents of every
# line, then the path's lines), so their peak is the path's, not the file's.
# And `import` of a pi session file of the same size (pi's session repeated),
# which it converts one line at a time.
#
#   benches/cli_memory.sh [SIZE_MB]     (default 211, the size issue 15 names)
#
# The transcript is pi's before-compaction session imported and repeated (when
# ../shared/conformance is beside the repository), else made from a few lines of
# every kind. Prints each command's peak RSS and time, and fails when a peak is
# over 64 MB.
set -euo pipefail
repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$repo"
size_mb="${1:-211}"
limit_kb=$((64 * 1024))

cargo build --quiet --release -p agentmsg-cli
bin="$(cargo metadata --format-version 1 --no-deps | python3 -c 'import json,sys; print(json.load(sys.stdin)["target_directory"])')/release/agentmsg"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

unit="$work/unit.jsonl"
pi="${AGENTMSG_CONFORMANCE_DIR:-$repo/../shared/conformance}/transcripts/pi/before-compaction.jsonl"
if [[ -f "$pi" ]]; then
    "$bin" import "$pi" -o "$unit" >/dev/null 2>&1
else
    for i in $(seq 200); do
        printf '%s\n' \
            '{"role":"user","content":[{"type":"text","text":"read the file and summarise it"}],"timestamp":1}' \
            "{\"role\":\"assistant\",\"content\":[{\"type\":\"thinking\",\"thinking\":\"plan\",\"thinkingSignature\":\"sig\"},{\"type\":\"toolCall\",\"id\":\"c$i\",\"name\":\"read\",\"arguments\":{\"path\":\"a.txt\"}}],\"api\":\"anthropic-messages\",\"provider\":\"anthropic\",\"model\":\"claude-sonnet-4-5\",\"usage\":{\"input\":1200,\"output\":80,\"cacheRead\":900,\"cacheWrite\":0,\"totalTokens\":2180,\"cost\":{\"input\":0.0036,\"output\":0.0012,\"cacheRead\":0.00027,\"cacheWrite\":0,\"total\":0.00507}},\"stopReason\":\"toolUse\",\"timestamp\":2}" \
            "{\"role\":\"toolResult\",\"toolCallId\":\"c$i\",\"toolName\":\"read\",\"content\":[{\"type\":\"text\",\"text\":\"$(head -c 3000 /dev/zero | tr '\0' 'x')\"}],\"isError\":false,\"timestamp\":3}" \
            '{"role":"notice","text":"an app line"}' >>"$unit"
    done
fi
big="$work/big.jsonl"
unit_bytes=$(stat -c %s "$unit")
copies=$(((size_mb * 1024 * 1024 + unit_bytes - 1) / unit_bytes))
for _ in $(seq "$copies"); do cat "$unit"; done >"$big"
echo "transcript: $(($(stat -c %s "$big") / 1024 / 1024)) MB ($copies copies of $unit_bytes bytes)"

failed=0
# Runs `agentmsg ARGS…`, prints its peak RSS and time, and fails over the limit.
measure() {
    local kb secs
    read -r kb secs < <(/usr/bin/time -f "%M %e" "$bin" "$@" 2>&1 >/dev/null | tail -1)
    echo "$1: peak RSS $((kb / 1024)) MB, $secs s"
    if ((kb > limit_kb)); then
        echo "error: $1 peaked over $((limit_kb / 1024)) MB" >&2
        failed=1
    fi
}
measure check "$big"
measure stats "$big"
measure repair "$big" -o "$work/repaired.jsonl"
# The tree: a root, then each copy a branch of it (ids `<copy>-<line>`, each
# line the child of the one before, compactions keeping from their copy's ids).
tree="$work/tree.jsonl"
python3 - "$unit" "$tree" "$copies" <<'PY'
import json, sys
unit, tree, copies = sys.argv[1], sys.argv[2], int(sys.argv[3])
objs = [json.loads(l) for l in open(unit, encoding="utf-8") if l.strip()]
with open(tree, "w", encoding="utf-8") as out:
    out.write('{"role":"user","content":"start","timestamp":1,"id":"root","parentId":null}\n')
    for k in range(copies):
        ids = {o.get("id"): f"{k}-{j}" for j, o in enumerate(objs)}
        for j, o in enumerate(objs):
            o = dict(o, id=f"{k}-{j}", parentId="root" if j == 0 else f"{k}-{j - 1}")
            if "firstKeptId" in o:
                o["firstKeptId"] = ids.get(o["firstKeptId"], o["firstKeptId"])
            out.write(json.dumps(o, separators=(",", ":"), ensure_ascii=False) + "\n")
PY
echo "session tree: $(($(stat -c %s "$tree") / 1024 / 1024)) MB, the leaf's path one copy"
measure context "$tree"
measure project "$tree" --api openai-completions --model gpt-4.1
if [[ -f "$pi" ]]; then
    pi_big="$work/pi.jsonl"
    pi_bytes=$(stat -c %s "$pi")
    for _ in $(seq $(((size_mb * 1024 * 1024 + pi_bytes - 1) / pi_bytes))); do cat "$pi"; done >"$pi_big"
    echo "pi session: $(($(stat -c %s "$pi_big") / 1024 / 1024)) MB"
    measure import "$pi_big" -o "$work/pi-imported.jsonl"
else
    echo "import: skipped (no pi session in ../shared/conformance)"
fi
exit "$failed"
