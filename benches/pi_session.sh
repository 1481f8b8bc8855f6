#!/usr/bin/env bash
# pi against agentmsg on the same 100,000-entry pi session: the time and peak
# memory of opening it and building the context at its leaf.
#
#   benches/pi_session.sh [ENTRIES]      (needs node; installs pi into target/pi-node)
#
# pi: `parseSessionEntries` + `migrateSessionEntries` + `buildSessionContext`
# + `convertToLlm` (what `SessionManager` does on load, then what a prompt
# sends), timed inside node after its imports; agentmsg: `agentmsg context`,
# the whole process. Peak RSS of each process by /usr/bin/time; node's
# includes its runtime and pi's modules, so its baseline (the imports alone)
# is printed too.
set -euo pipefail
repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$repo"
entries="${1:-100000}"
source benches/pi_node.sh
cargo build --quiet --release -p agentmsg-cli
bin="$target_dir/release/agentmsg"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
python3 benches/gen_pi_session.py "$entries" "$work/pi.jsonl"
cat >"$work/pi.mjs" <<'JS'
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
const pi = await import(pathToFileURL(join(process.env.PI_NODE, "node_modules/@mariozechner/pi-coding-agent/dist/index.js")).href);
if (process.argv[2] === "--imports-only") process.exit(0);
const start = performance.now();
const entries = pi.parseSessionEntries(readFileSync(process.argv[2], "utf8"));
pi.migrateSessionEntries(entries);
const context = pi.buildSessionContext(entries);
const sent = pi.convertToLlm(context.messages);
const ms = performance.now() - start;
console.error(`pi: ${sent.length} messages in ${ms.toFixed(0)} ms`);
JS
size=$(du -m "$work/pi.jsonl" | cut -f1)
echo "session: $entries entries, $size MB"
for run in 1 2 3; do
    /usr/bin/time -f "agentmsg context: %e s, peak %M KB" "$bin" context "$work/pi.jsonl" >/dev/null 2>"$work/a.err"
    grep "agentmsg context:" "$work/a.err"
    PI_NODE="$pi_node" /usr/bin/time -f "pi (node): %e s, peak %M KB" node "$work/pi.mjs" "$work/pi.jsonl" 2>&1 | grep -v "^$"
done
PI_NODE="$pi_node" /usr/bin/time -f "node with pi's modules imported, nothing read: %e s, peak %M KB" node "$work/pi.mjs" --imports-only
