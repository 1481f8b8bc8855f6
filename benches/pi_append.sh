#!/usr/bin/env bash
# pi against agentmsg appending one entry at a time to a new session: the time
# per entry of 1,000 appends of the store bench's lines (a user prompt, an
# assistant turn with a tool call, its result, repeated; about 0.5 kB each).
#
#   benches/pi_append.sh [ROUNDS]      (needs node; installs pi into target/pi-node)
#
# pi, in node:
#   - `appendFileSync` of each line, already a string: what pi's
#     `SessionManager` does per entry, and nothing else (the I/O alone);
#   - `SessionManager.appendMessage` of each message, pi 0.73.1's own code:
#     the id, the timestamp, `JSON.stringify`, and the same `appendFileSync`.
# agentmsg: `JsonlDir::append` of one `StoredEntry` a call, and the bench's
# Rust `file-open-each` (open, write, close: `appendFileSync` without node),
# criterion's median from `benches/store.rs`. Each pi figure is the median of
# 21 sessions of 1,000 appends; the rounds alternate which side goes first.
set -euo pipefail
repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$repo"
rounds="${1:-3}"
source benches/pi_node.sh
bench="$(benches/bench.sh --bench store --all-features --no-run --message-format=json 2>/dev/null |
    python3 -c 'import json,sys
for line in sys.stdin:
    m = json.loads(line)
    if m.get("reason") == "compiler-artifact" and m["target"]["name"] == "store" and m.get("executable"):
        print(m["executable"])')"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
cat >"$work/pi.mjs" <<'JS'
import { appendFileSync, mkdtempSync, rmSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
const pi = await import(pathToFileURL(join(process.env.PI_NODE, "node_modules/@mariozechner/pi-coding-agent/dist/index.js")).href);
const dir = mkdtempSync(join(process.env.WORK, "s-"));
// The store bench's messages (benches/store.rs `lines`), as pi's objects.
const message = (i) => {
    const timestamp = 1_765_233_665_292 + i;
    switch (i % 3) {
        case 0: return { role: "user", content: [{ type: "text", text: `Please look at src/module_${i}.rs and tell me why the test fails; the error mentions a lifetime.` }], timestamp };
        case 1: return { role: "assistant", content: [{ type: "text", text: "Reading the file first." }, { type: "toolCall", id: `toolu_${i}`, name: "read", arguments: { path: `src/module_${i}.rs` } }], api: "anthropic-messages", provider: "anthropic", model: "claude-opus-4-5", usage: { input: 2775, output: 141, cacheRead: 0, cacheWrite: 0, totalTokens: 2916, cost: { input: 0.0139, output: 0.0035, cacheRead: 0, cacheWrite: 0, total: 0.0174 } }, stopReason: "toolUse", timestamp };
        default: return { role: "toolResult", toolCallId: `toolu_${i - 1}`, toolName: "read", content: [{ type: "text", text: 'fn main() { let s = String::new(); println!("{}", s); }' }], isError: false, timestamp, details: { bytes: 61 } };
    }
};
const n = 1000;
const messages = Array.from({ length: n }, (_, i) => message(i));
const lines = messages.map((m, i) => `${JSON.stringify({ ...m, id: `e${i}`, parentId: i === 0 ? null : `e${i - 1}` })}\n`);
const median = (xs) => xs.sort((a, b) => a - b)[xs.length >> 1];
const raw = [], manager = [];
for (let r = 0; r < 21; r++) {
    const file = join(dir, `raw${r}.jsonl`);
    let t = process.hrtime.bigint();
    for (const line of lines) appendFileSync(file, line);
    raw.push(Number(process.hrtime.bigint() - t) / n / 1000);
    const sessions = join(dir, `m${r}`);
    const session = pi.SessionManager.create(dir, sessions);
    t = process.hrtime.bigint();
    for (const m of messages) session.appendMessage(m);
    manager.push(Number(process.hrtime.bigint() - t) / n / 1000);
}
rmSync(dir, { recursive: true });
console.log(`pi appendFileSync ${median(raw).toFixed(2)} us`);
console.log(`pi SessionManager.appendMessage ${median(manager).toFixed(2)} us`);
JS
agentmsg() {
    # criterion's median time for 1,000 appends, in µs an entry.
    AGENTMSG_BENCH_ONLY=append,jsonl-dir "$bench" --bench 'append/(jsonl-dir|file-open-each)$' 2>&1 |
        awk '/^append\// { name = $1 }
            /time:/ && name != "" { for (i = 1; i <= NF; i++) if ($i == "time:") break
                v = $(i + 3); u = $(i + 4)
                if (u == "ms") v *= 1000; else if (u == "s") v *= 1000000; else if (u == "ns") v /= 1000
                printf "%s %.2f us\n", name, v / 1000; name = "" }'
}
for round in $(seq "$rounds"); do
    echo "round $round (load $(cut -d' ' -f1-3 /proc/loadavg))"
    if (( round % 2 )); then
        agentmsg; PI_NODE="$pi_node" WORK="$work" node "$work/pi.mjs"
    else
        PI_NODE="$pi_node" WORK="$work" node "$work/pi.mjs"; agentmsg
    fi
done | tee "$work/out"
python3 - "$work/out" <<'PY'
import re, statistics, sys
values = {}
for line in open(sys.argv[1]):
    m = re.match(r"(.+?) ([\d.]+) us$", line.strip())
    if m:
        values.setdefault(m.group(1), []).append(float(m.group(2)))
med = {k: statistics.median(v) for k, v in values.items()}
ours = med.get("append/jsonl-dir")
print("medians of the rounds, per entry:")
for k, v in med.items():
    print(f"  {k}: {v:.2f} us" + (f"  (agentmsg's JsonlDir append takes {ours / v:.2f}x this)" if ours and k != "append/jsonl-dir" else ""))
PY
