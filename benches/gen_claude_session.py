"""The same conversation twice: as a pi session file (version 3) and as a
Claude Code log, N turns of three entries each (a user prompt, a reply
with signed thinking and a tool call, the tool's result), the texts of
benches/gen_pi_session.py. Claude Code writes a reply as one line per
content block (here thinking, then the call), each carrying the message's
id and usage, and the result as a user line with `toolUseResult`. Seeded
by its arguments only. Used by export_claude.sh.

    python3 benches/gen_claude_session.py TURNS PI_PATH CLAUDE_PATH
"""
import json, sys

n, pi_path, cc_path = int(sys.argv[1]), sys.argv[2], sys.argv[3]
session = "11111111-2222-4333-8444-555555555555"


def ts(i):
    return f"2025-01-01T{i // 3600 % 24:02d}:{i // 60 % 60:02d}:{i % 60:02d}.000Z"


def compact(obj):
    return json.dumps(obj, separators=(",", ":"))


with open(pi_path, "w") as pi, open(cc_path, "w") as cc:
    pi.write(compact({"type": "session", "version": 3, "id": session, "timestamp": ts(0), "cwd": "/w"}) + "\n")
    pi_parent = None
    cc_parent = None
    common = {"isSidechain": False, "userType": "external", "cwd": "/w", "sessionId": session, "version": "2.1.114", "gitBranch": "main"}

    def put_cc(kind, uuid, message, t, **extra):
        global cc_parent
        line = {"parentUuid": cc_parent, **common, "type": kind, "message": message, "uuid": uuid, "timestamp": ts(t), **extra}
        cc.write(compact(line) + "\n")
        cc_parent = uuid

    def put_pi(eid, message, t):
        global pi_parent
        pi.write(compact({"type": "message", "id": eid, "parentId": pi_parent, "timestamp": ts(t), "message": message}) + "\n")
        pi_parent = eid

    for turn in range(n):
        i = 3 * turn
        prompt = f"please read file {i} and tell me what it does " * 3
        thinking = "I should read it. " * 8
        call = f"toolu_{i:08d}"
        path = f"src/f{i}.rs"
        output = "fn main() { println!(\"hello\"); }\n" * 12
        usage_pi = {"input": 1200, "output": 80, "cacheRead": 900, "cacheWrite": 0, "totalTokens": 2180,
                    "cost": {"input": 0.0036, "output": 0.0012, "cacheRead": 0.00027, "cacheWrite": 0, "total": 0.00507}}
        usage_cc = {"input_tokens": 1200, "cache_creation_input_tokens": 0, "cache_read_input_tokens": 900, "output_tokens": 80,
                    "service_tier": "standard"}
        # The user's prompt.
        put_pi(f"{i:08x}", {"role": "user", "content": [{"type": "text", "text": prompt}], "timestamp": i * 1000}, i)
        put_cc("user", f"{i:08x}-0000-4000-8000-000000000000", {"role": "user", "content": prompt}, i)
        # The reply: thinking and a call.
        put_pi(f"{i + 1:08x}", {"role": "assistant", "content": [
            {"type": "thinking", "thinking": thinking, "thinkingSignature": "sig"},
            {"type": "toolCall", "id": call, "name": "Read", "arguments": {"file_path": path}}],
            "api": "anthropic-messages", "provider": "anthropic", "model": "claude-sonnet-4-5",
            "usage": usage_pi, "stopReason": "toolUse", "timestamp": (i + 1) * 1000}, i + 1)
        blocks = [{"type": "thinking", "thinking": thinking, "signature": "sig"},
                  {"type": "tool_use", "id": call, "name": "Read", "input": {"file_path": path}}]
        for b, block in enumerate(blocks):
            message = {"model": "claude-sonnet-4-5", "id": f"msg_{i:08d}", "type": "message", "role": "assistant",
                       "content": [block], "stop_reason": "tool_use", "stop_sequence": None, "usage": usage_cc}
            put_cc("assistant", f"{i + 1:08x}-000{b}-4000-8000-000000000000", message, i + 1, requestId=f"req_{i:08d}")
        # The tool's result.
        put_pi(f"{i + 2:08x}", {"role": "toolResult", "toolCallId": call, "toolName": "Read",
                                "content": [{"type": "text", "text": output}], "isError": False, "timestamp": (i + 2) * 1000}, i + 2)
        put_cc("user", f"{i + 2:08x}-0000-4000-8000-000000000000",
               {"role": "user", "content": [{"tool_use_id": call, "type": "tool_result", "content": output, "is_error": False}]},
               i + 2, toolUseResult={"type": "text", "file": {"filePath": path, "numLines": 12}})
