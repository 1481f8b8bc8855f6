# Sourced by the benches that run pi: sets `target_dir` (cargo's) and
# `pi_node` (`$AGENTMSG_PI_NODE`, or target/pi-node), installing pi 0.73.1
# there from npm when it is missing. Run from the repository's root.
target_dir="$(cargo metadata --format-version 1 --no-deps | python3 -c 'import json,sys; print(json.load(sys.stdin)["target_directory"])')"
pi_node="${AGENTMSG_PI_NODE:-$target_dir/pi-node}"
if [[ ! -f "$pi_node/node_modules/@mariozechner/pi-coding-agent/package.json" ]]; then
    mkdir -p "$pi_node"
    npm install --prefix "$pi_node" --no-audit --no-fund --loglevel=error --ignore-scripts \
        @mariozechner/pi-coding-agent@0.73.1
fi
