#!/usr/bin/env bash
# Regenerates the built-in model list (context windows, output limits, whether
# a model reasons and reads images) from pi's generated model list, the npm
# package @mariozechner/pi-ai, into runtime/src/providers/catalog/models.json.
# The file records the package version and the day it was published.
#
#   scripts/models/update.sh               # the version pinned below
#   scripts/models/update.sh --check       # fails when the committed file differs
#   PI_AI_VERSION=latest scripts/models/update.sh   # move to the newest release
#
# Needs node and npm (and the npm registry). Prices are not taken from here:
# they come from the genai-prices crate (the runtime's `prices` feature).
set -euo pipefail

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
out="$repo/runtime/src/providers/catalog/models.json"
package="@mariozechner/pi-ai"
version="${PI_AI_VERSION:-0.73.1}"
check=false
case "${1:-}" in
    --check) check=true ;;
    "") ;;
    *) echo "usage: $0 [--check]" >&2; exit 2 ;;
esac

for tool in node npm tar; do
    command -v "$tool" >/dev/null || { echo "error: $tool is needed" >&2; exit 2; }
done
if [[ "$version" == latest ]]; then
    version="$(npm view "$package" version)"
fi
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT

published="$(npm view "$package" time --json | node -e '
    let s = ""; process.stdin.on("data", (d) => (s += d)).on("end", () => {
        const when = JSON.parse(s)[process.argv[1]];
        if (!when) { console.error(`error: no publish time for ${process.argv[1]}`); process.exit(1); }
        console.log(when.slice(0, 10));
    });' "$version")"
(cd "$tmp" && npm pack --silent "$package@$version" >/dev/null)
tar -xzf "$tmp"/*.tgz -C "$tmp"
node "$repo/scripts/models/generate.mjs" "$tmp/package/dist/models.generated.js" "$version" "$published" >"$tmp/models.json"

if $check; then
    if ! diff -u "$out" "$tmp/models.json"; then
        echo "error: $out is not what scripts/models/update.sh generates from $package@$version" >&2
        exit 1
    fi
    echo "models.json matches $package@$version ($published)"
else
    mv "$tmp/models.json" "$out"
    echo "wrote $out from $package@$version ($published): $(grep -c '"id"' "$out") models"
fi
