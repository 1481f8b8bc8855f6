#!/usr/bin/env bash
# Builds the seed corpora of every fuzz target under fuzz/corpus/<target>/ from
# the conformance data beside the repository (../shared/conformance, or
# $AGENTMSG_CONFORMANCE_DIR), the CLI's test fixtures, the golden lines, and the
# hand-written seeds in fuzz/seeds/. Nothing it writes is committed
# (fuzz/corpus is ignored). Run it again at any time: it only adds files, named
# by their content's hash.
#
#   fuzz/seed.sh            # from anywhere
set -euo pipefail

fuzz="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(dirname "$fuzz")"
conformance="${AGENTMSG_CONFORMANCE_DIR:-$repo/../shared/conformance}"
if [[ ! -f "$conformance/README.md" ]]; then
    echo "error: conformance data not found at $conformance" >&2
    echo "       put shared/ beside the repository, or set AGENTMSG_CONFORMANCE_DIR" >&2
    exit 1
fi

python3 - "$fuzz" "$repo" "$conformance" <<'PY'
import hashlib, json, pathlib, sys

fuzz, repo, conf = (pathlib.Path(p) for p in sys.argv[1:4])
corpus = fuzz / "corpus"
# Bigger inputs make every run of a target slow (libFuzzer's -max_len follows
# the largest seed); a few conformance streams are left out for it.
MAX = 64 * 1024
counts = {}

def seed(target, data):
    if isinstance(data, str):
        data = data.encode()
    if not data or len(data) > MAX:
        return
    out = corpus / target
    out.mkdir(parents=True, exist_ok=True)
    path = out / hashlib.sha1(data).hexdigest()
    if not path.exists():
        path.write_bytes(data)
        counts[target] = counts.get(target, 0) + 1

def compact(value):
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)

def lines(path):
    return path.read_bytes().split(b"\n")

# Hand-written seeds kept in the repository.
for target_dir in sorted((fuzz / "seeds").iterdir()):
    for f in sorted(target_dir.iterdir()):
        seed(target_dir.name, f.read_bytes())

# decode_line: one line each. jsonl_reader: whole files, and pieces of the pi
# sessions (pi entries as they are, and their messages as agentmsg lines).
fixtures = sorted((repo / "cli/tests/fixtures").glob("*.jsonl")) + [repo / "tests/golden/design.jsonl"]
for f in fixtures:
    seed("jsonl_reader", f.read_bytes())
    for line in lines(f):
        seed("decode_line", line)
for f in sorted((repo / "cli/tests/fixtures").glob("*.json")):
    seed("jsonl_reader", f.read_bytes())
for f in sorted((repo / "tests/golden").rglob("*.json")):
    value = json.loads(f.read_text())
    if isinstance(value, dict) and "role" in value:
        seed("decode_line", compact(value))

pi = conf / "transcripts/pi"
for f in sorted(pi.glob("*.jsonl")):
    raw = lines(f)
    messages = []
    for line in raw:
        try:
            entry = json.loads(line)
        except ValueError:
            continue
        if isinstance(entry, dict) and isinstance(entry.get("message"), dict):
            messages.append(compact(entry["message"]).encode())
    for m in messages:
        seed("decode_line", m)
    for i in range(0, len(messages), 4):
        seed("jsonl_reader", b"\n".join(messages[i:i + 4]) + b"\n")
    for i in range(0, len(raw), 4):
        seed("jsonl_reader", b"\n".join(raw[i:i + 4]))
    # The session reader: pieces of 16 entries as pi wrote them (a header
    # first, so they read as pi sessions) and as agentmsg lines.
    for i in range(1, len(raw), 16):
        seed("session_read", b"\n".join(raw[:1] + raw[i:i + 16]) + b"\n")
    for i in range(0, len(messages), 16):
        seed("session_read", b"\n".join(messages[i:i + 16]) + b"\n")
for f in sorted(pi.glob("*.json")):
    seed("decode_line", compact(json.loads(f.read_text())))

# A stream over the size limit keeps its first and last events (the start, and
# the finish with its usage), half the limit each: the deltas between are lost.
def head_and_tail(data):
    if len(data) <= MAX:
        return data
    events = data.split(b"\n")
    head, tail, size = [], [], 0
    for e in events:
        if size + len(e) + 1 > MAX // 2:
            break
        head.append(e)
        size += len(e) + 1
    size = 0
    for e in reversed(events[len(head):]):
        if size + len(e) + 1 > MAX // 2:
            break
        tail.insert(0, e)
        size += len(e) + 1
    return b"\n".join(head + tail)

# Providers: each response body for its decoder; each stream (one event's JSON
# a line) for its stream decoder. A Gemini stream chunk is a whole response
# body, so each one seeds the body decoder too.
responses = conf / "responses"
providers = {
    "openai_chat": responses / "vercel/openai/chat",
    "openai_responses": responses / "vercel/openai/responses",
    "anthropic": responses / "vercel/anthropic",
    "gemini": responses / "vercel/google",
}
for target, folder in providers.items():
    for f in sorted(folder.glob("*.json")):
        seed(f"{target}_response", f.read_bytes())
    for f in sorted(folder.glob("*.chunks.txt")):
        seed(f"{target}_stream", head_and_tail(f.read_bytes()))
        if target == "gemini":
            for line in lines(f):
                seed("gemini_response", line)

# Raw SSE streams: their data payloads, one a line.
def sse_data(path):
    out = []
    for line in path.read_text().splitlines():
        if line.startswith("data:"):
            out.append(line[5:].strip())
    return "\n".join(out) + "\n"
seed("anthropic_stream", sse_data(responses / "sse/anthropic-sdk-tool-use.sse"))
seed("openai_chat_stream", sse_data(responses / "sse/openai-chat-tool-calls.sse"))
# The SSE parser: each raw stream, behind a byte that picks the chunk size.
for f in sorted((responses / "sse").glob("*.sse")):
    for size in (1, 7, 63):
        seed("sse_parser", bytes([size]) + f.read_bytes())

for target in sorted(counts):
    total = len(list((corpus / target).iterdir()))
    print(f"{target}: {counts[target]} new seeds, {total} in fuzz/corpus/{target}")
PY
