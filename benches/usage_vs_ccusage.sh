#!/usr/bin/env bash
# CPU of `agentmsg usage` against ccusage 20.0.24 (`ccusage claude`, its
# native linux-x64 binary) on the same directory of Claude Code logs, in one
# run: every Claude Code log of the conformance data copied COPIES times
# (default 100, about 190 MB) under a temporary ~/.claude/projects, each copy
# its own project. Each tool runs each view (daily and session, --json)
# RUNS times (default 3); the user+system CPU seconds of the best run (its
# children included: ccusage's launcher and binary) and the wall time are
# printed, with agentmsg's CPU as a ratio of ccusage's.
#
#   benches/usage_vs_ccusage.sh [COPIES] [RUNS]
#
# Needs the conformance data beside the repository and ccusage in
# target/ccusage-node (`.ci/run` installs it; or set AGENTMSG_CCUSAGE_NODE).
set -euo pipefail
repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$repo"
copies="${1:-100}"
runs="${2:-3}"
data="${AGENTMSG_CONFORMANCE_DIR:-$repo/../shared/conformance}/transcripts/claude-code"
target="$(cargo metadata --format-version 1 --no-deps | python3 -c 'import json,sys; print(json.load(sys.stdin)["target_directory"])')"
ccusage="${AGENTMSG_CCUSAGE_NODE:-$target/ccusage-node}/node_modules/.bin/ccusage"
[[ -d "$data" ]] || { echo "no conformance data at $data" >&2; exit 1; }
[[ -x "$ccusage" ]] || { echo "no ccusage at $ccusage (.ci/run installs it)" >&2; exit 1; }

cargo build --quiet --release -p agentmsg-cli
bin="$target/release/agentmsg"
home="$(mktemp -d)"
trap 'rm -rf "$home"' EXIT
projects="$home/.claude/projects"
mkdir -p "$projects"
for i in $(seq 1 "$copies"); do
    for project in "$data"/*/; do
        cp -r "$project" "$projects/$(basename "$project")-copy$i"
    done
done
echo "$(find "$projects" -name '*.jsonl' | wc -l) logs, $(du -sm "$projects" | cut -f1) MB"

python3 - "$bin" "$ccusage" "$home" "$runs" <<'PY'
import os, resource, subprocess, sys, time
agentmsg, ccusage, home, runs = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
env = dict(os.environ, HOME=home, CLAUDE_CONFIG_DIR=os.path.join(home, ".claude"),
           CODEX_HOME=os.path.join(home, ".codex"), TZ="UTC")
env.pop("CI", None)

def measure(cmd):
    best = None
    for _ in range(runs):
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        start = time.perf_counter()
        out = subprocess.run(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        wall = time.perf_counter() - start
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        if out.returncode != 0:
            sys.exit(f"{cmd}: {out.stderr.decode()}")
        cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
        if best is None or cpu < best[0]:
            best = (cpu, wall)
    return best

print(f"{'view':8} {'tool':9} {'CPU s':>7} {'wall s':>7}  agentmsg CPU / ccusage CPU")
for view, ours in (("daily", "--daily"), ("session", "--session")):
    theirs = measure([ccusage, "claude", view, "--json", "--offline", "--timezone", "UTC"])
    mine = measure([agentmsg, "usage", ours, "--json", "--timezone", "UTC"])
    print(f"{view:8} {'ccusage':9} {theirs[0]:7.2f} {theirs[1]:7.2f}")
    print(f"{view:8} {'agentmsg':9} {mine[0]:7.2f} {mine[1]:7.2f}  {mine[0] / theirs[0]:.2f}x")
PY
