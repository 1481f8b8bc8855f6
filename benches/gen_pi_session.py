"""A pi session file (version 3) of N linear entries, a third each user
prompts, assistant turns with signed thinking and a tool call, and tool
results: about 600 bytes an entry. Used by pi_session.sh and
export_memory.sh.

    python3 benches/gen_pi_session.py ENTRIES PATH
"""
import json, sys
n, path = int(sys.argv[1]), sys.argv[2]
with open(path, "w") as f:
    f.write(json.dumps({"type": "session", "version": 3, "id": "s", "timestamp": "2025-01-01T00:00:00.000Z", "cwd": "/w"}) + "\n")
    parent = None
    for i in range(n):
        k = i % 3
        if k == 0:
            m = {"role": "user", "content": [{"type": "text", "text": f"please read file {i} and tell me what it does " * 3}], "timestamp": i}
        elif k == 1:
            m = {"role": "assistant", "content": [{"type": "thinking", "thinking": "I should read it. " * 8, "thinkingSignature": "sig"},
                 {"type": "toolCall", "id": f"call_{i}", "name": "read", "arguments": {"path": f"src/f{i}.rs", "offset": 0, "limit": 200}}],
                 "api": "anthropic-messages", "provider": "anthropic", "model": "claude-sonnet-4-5",
                 "usage": {"input": 1200, "output": 80, "cacheRead": 900, "cacheWrite": 0, "totalTokens": 2180,
                           "cost": {"input": 0.0036, "output": 0.0012, "cacheRead": 0.00027, "cacheWrite": 0, "total": 0.00507}},
                 "stopReason": "toolUse", "timestamp": i}
        else:
            m = {"role": "toolResult", "toolCallId": f"call_{i-1}", "toolName": "read",
                 "content": [{"type": "text", "text": "fn main() { println!(\"hello\"); }\n" * 12}], "isError": False, "timestamp": i}
        eid = f"{i:08x}"
        f.write(json.dumps({"type": "message", "id": eid, "parentId": parent, "timestamp": "2025-01-01T00:00:00.000Z", "message": m}) + "\n")
        parent = eid
