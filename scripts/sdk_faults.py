#!/usr/bin/env python3
"""A loopback fault server, and the official Python SDKs driven against it.

Usage: sdk_faults.py [SCENARIO...]

The other side of tests/http/sdk_faults.rs, which runs agentmsg's client
against the same server once the SDKs' runs are done and compares the two (issue 37:
"on every fault, agentmsg makes the same number of attempts and waits as long
as the official SDKs"). It:

  1. starts two HTTP servers on 127.0.0.1 (the second one is "another
     origin", the target of a cross-origin redirect) and prints
     {"listening": URL, "other": URL};
  2. runs the anthropic SDK (Messages) and the openai SDK (Chat Completions,
     and Responses for the stream error), each with max_retries=2, on every
     scenario at once, one thread each, and prints one line per run:
     {"run": ..., "seen": what the caller got};
  3. when its standard input ends (the Rust side is done too), prints
     {"log": {run: [{"t": seconds, "sent": seconds, "other": bool, "key": bool,
     "body": bytes}, ...]}}: every request each run made, when it arrived,
     when its reply had been sent, whether it reached the other origin,
     whether it carried the API key there, and its body's size.

A run is the first two path segments of a request, `/SCENARIO/CLIENT/...`;
the rest is the API's own path (`/v1/messages`, `/chat/completions`,
`/responses`), which picks the error body's shape. Every fault repeats on
every attempt, so the number of attempts is the client's retry policy.
A run that has not ended CUTOFF seconds after it began (an SDK sleeping for
a long Retry-After) is reported as still waiting.
"""

from __future__ import annotations

import email.utils
import json
import os
import socket
import struct
import sys
import threading
import warnings
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

CUTOFF = 6.0
# A run's requests, by run id: (arrived, reply sent, at the other origin, with a key, body bytes).
LOG: dict[str, list[tuple[float, float, bool, bool, int]]] = {}
LOG_LOCK = threading.Lock()
BIG = 1024 * 1024

ANTHROPIC_TEXT = [
    {"type": "message_start", "message": {"id": "msg_1", "type": "message", "role": "assistant",
                                          "model": "claude-sonnet-4-5", "content": [],
                                          "stop_reason": None, "stop_sequence": None,
                                          "usage": {"input_tokens": 5, "output_tokens": 1}}},
    {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}},
    {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "Hel"}},
]
CHAT_TEXT = [
    {"id": "c1", "object": "chat.completion.chunk", "created": 1, "model": "gpt-4.1",
     "choices": [{"index": 0, "delta": {"role": "assistant", "content": "Hel"}, "finish_reason": None}]},
]
RESPONSES_TEXT = [
    {"type": "response.created", "sequence_number": 0,
     "response": {"id": "resp_1", "object": "response", "created_at": 1, "status": "in_progress",
                  "model": "gpt-4.1", "output": [], "parallel_tool_calls": True, "tool_choice": "auto",
                  "tools": []}},
    {"type": "response.output_text.delta", "sequence_number": 1, "item_id": "msg_1",
     "output_index": 0, "content_index": 0, "delta": "Hel", "logprobs": []},
]


def api_of(path: str) -> str:
    if path.endswith("/messages"):
        return "anthropic"
    if path.endswith("/responses"):
        return "responses"
    return "chat"


def error_body(api: str, kind: str, message: str) -> bytes:
    if api == "anthropic":
        body = {"type": "error", "error": {"type": kind, "message": message}}
    else:
        body = {"error": {"message": message, "type": kind, "param": None, "code": None}}
    return json.dumps(body).encode()


def sse(events: list[tuple[str | None, dict]]) -> bytes:
    out = b""
    for name, data in events:
        if name:
            out += f"event: {name}\n".encode()
        out += f"data: {json.dumps(data)}\n\n".encode()
    return out


def stream_head(api: str) -> bytes:
    """A reply's first events (it breaks off after them)."""
    if api == "anthropic":
        return sse([(e["type"], e) for e in ANTHROPIC_TEXT])
    if api == "responses":
        return sse([(e["type"], e) for e in RESPONSES_TEXT])
    return sse([(None, e) for e in CHAT_TEXT])


def stream_error_events(api: str) -> bytes:
    """A reply that begins, then carries the provider's error event."""
    if api == "anthropic":
        error = ("error", {"type": "error",
                           "error": {"type": "overloaded_error", "message": "Overloaded"}})
    elif api == "responses":
        error = ("error", {"type": "error", "sequence_number": 2, "code": "server_error",
                           "message": "The server had an error", "param": None})
    else:
        error = (None, {"error": {"message": "The server had an error", "type": "server_error",
                                  "param": None, "code": None}})
    return stream_head(api) + sse([error])


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    other = False  # the other origin's handler

    def log_message(self, format: str, *args: object) -> None:  # noqa: A002 (the base class's name)
        pass

    def do_POST(self) -> None:  # noqa: N802 (http.server's name)
        arrived = time.monotonic()
        length = int(self.headers.get("content-length") or 0)
        body = self.rfile.read(length)
        parts = self.path.split("/")
        run = "/".join(parts[1:3])
        scenario = parts[1]
        key = any(self.headers.get(name) for name in ("x-api-key", "authorization", "api-key"))
        try:
            if self.other:
                # What reached the other origin is logged; the reply is a 404.
                self.reply(404, error_body(api_of(self.path), "not_found_error", "other origin"))
            else:
                FAULTS[scenario](self, api_of(self.path))
        except (BrokenPipeError, ConnectionResetError):
            pass  # the client went away (it reads at most part of a big error body)
        # A wait is counted from when the reply was sent to the next request.
        with LOG_LOCK:
            LOG.setdefault(run, []).append((arrived, time.monotonic(), self.other, key, len(body)))

    def reply(self, status: int, body: bytes, headers: dict[str, str] | None = None) -> None:
        self.send_response(status)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(body)))
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(body)

    def stream(self, body: bytes, complete: bool) -> None:
        """A 200 event stream, chunked; an incomplete one is cut by a reset."""
        self.send_response(200)
        self.send_header("content-type", "text/event-stream")
        self.send_header("transfer-encoding", "chunked")
        self.end_headers()
        self.wfile.write(b"%x\r\n%s\r\n" % (len(body), body))
        if complete:
            self.wfile.write(b"0\r\n\r\n")
        else:
            self.wfile.flush()
            self.reset()

    def reset(self) -> None:
        """Closes the connection with a TCP reset (SO_LINGER 0)."""
        self.close_connection = True
        self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        self.connection.close()


def retry_after(seconds: str):
    return lambda h, api: h.reply(429, error_body(api, "rate_limit_error", "slow down"),
                                  {"retry-after": seconds})


def retry_after_date(ahead: float):
    def fault(h: Handler, api: str) -> None:
        date = email.utils.formatdate(time.time() + ahead, usegmt=True)
        h.reply(429, error_body(api, "rate_limit_error", "slow down"), {"retry-after": date})
    return fault


def redirect(h: Handler, api: str) -> None:
    h.reply(307, b"", {"location": f"{OTHER_URL}{h.path}"})


FAULTS = {
    "503": lambda h, api: h.reply(503, error_body(api, "server_error", "unavailable")),
    "503-should-retry-false": lambda h, api: h.reply(
        503, error_body(api, "server_error", "unavailable"), {"x-should-retry": "false"}),
    "400-should-retry-true": lambda h, api: h.reply(
        400, error_body(api, "invalid_request_error", "try again"), {"x-should-retry": "true"}),
    "429-retry-after-1": retry_after("1"),
    "429-retry-after-ms-300": lambda h, api: h.reply(
        429, error_body(api, "rate_limit_error", "slow down"), {"retry-after-ms": "300"}),
    "429-retry-after-date": retry_after_date(2.0),
    "429-retry-after-past-date": retry_after_date(-30.0),
    "429-retry-after-0": retry_after("0"),
    "429-retry-after-90": retry_after("90"),
    "429-retry-after-150": retry_after("150"),
    "529-overloaded": lambda h, api: h.reply(529, error_body(api, "overloaded_error", "Overloaded")),
    "500-big-body": lambda h, api: h.reply(500, b"x" * BIG),
    "connection-reset": lambda h, api: h.reset(),
    "stream-error-event": lambda h, api: h.stream(stream_error_events(api), True),
    "stream-cut": lambda h, api: h.stream(stream_head(api), False),
    "307-other-origin": redirect,
}
# The runs that stream (the others ask for a whole reply).
STREAMED = {"stream-error-event", "stream-cut"}
OTHER_URL = ""


class OtherHandler(Handler):
    other = True


class Server(ThreadingHTTPServer):
    daemon_threads = True
    # Every run connects at once: with socketserver's backlog of 5 the
    # kernel drops the other connections' SYNs and they come a second later.
    request_queue_size = 128

    def handle_error(self, request: object, client_address: object) -> None:
        pass  # a connection reset on purpose, or one the client dropped


def describe(error: BaseException) -> str:
    """What the caller saw: the exception's class, its status and how much of
    the error body it holds."""
    text = type(error).__name__
    status = getattr(error, "status_code", None)
    if status is not None:
        text += f" {status}"
    body = getattr(error, "body", None)
    if isinstance(body, str):
        text += f", body {len(body)} B"
    elif body is not None:
        text += f", body {len(json.dumps(body))} B of JSON"
    return text


def client_for(client: str, base: str):
    """The SDK client of one run (max_retries=2: the SDKs' default and agentmsg's)."""
    import anthropic
    import openai

    if client == "anthropic-sdk":
        return anthropic.Anthropic(api_key="sk-sdk-key", base_url=base, max_retries=2)
    return openai.OpenAI(api_key="sk-sdk-key", base_url=base + "/v1", max_retries=2)


def drive(client: str, sdk, scenario: str) -> str:
    """Runs one SDK request of `scenario`; what its caller saw."""
    streamed = scenario in STREAMED
    try:
        if client == "anthropic-sdk":
            request = dict(model="claude-sonnet-4-5", max_tokens=64,
                           messages=[{"role": "user", "content": "Hi"}])
            if streamed:
                kinds = [event.type for event in sdk.messages.create(stream=True, **request)]
                return f"ok, events {kinds}"
            sdk.messages.create(**request)
            return "ok"
        if client == "openai-responses-sdk":
            kinds = [event.type for event in
                     sdk.responses.create(model="gpt-4.1", input="Hi", stream=True)]
            return f"ok, events {kinds}"
        request = dict(model="gpt-4.1", messages=[{"role": "user", "content": "Hi"}])
        if streamed:
            chunks = list(sdk.chat.completions.create(stream=True, **request))
            return f"ok, {len(chunks)} chunks"
        sdk.chat.completions.create(**request)
        return "ok"
    except Exception as error:  # noqa: BLE001 (what the caller sees is the point)
        return describe(error)


def main(argv: list[str]) -> int:
    global OTHER_URL
    warnings.simplefilter("ignore", DeprecationWarning)  # the model ids' end-of-life notes
    scenarios = argv[1:] or list(FAULTS)
    unknown = [s for s in scenarios if s not in FAULTS]
    if unknown:
        print(f"unknown scenario(s): {unknown}", file=sys.stderr)
        return 2
    server = Server(("127.0.0.1", 0), Handler)
    other = Server(("127.0.0.1", 0), OtherHandler)
    url = f"http://127.0.0.1:{server.server_address[1]}"
    OTHER_URL = f"http://127.0.0.1:{other.server_address[1]}"
    for s in (server, other):
        threading.Thread(target=s.serve_forever, daemon=True).start()
    print(json.dumps({"listening": url, "other": OTHER_URL}), flush=True)

    runs = [(c, s) for s in scenarios for c in ("anthropic-sdk", "openai-sdk")]
    if "stream-error-event" in scenarios:
        runs.append(("openai-responses-sdk", "stream-error-event"))
    # The clients are made first, so that no run's waits include another's
    # start-up (loading certificates, holding the interpreter's lock).
    clients = {(c, s): client_for(c, f"{url}/{s}/{c}") for c, s in runs}
    results: dict[str, str] = {}
    go = threading.Event()

    def run(client: str, scenario: str) -> None:
        go.wait()
        results[f"{scenario}/{client}"] = drive(client, clients[(client, scenario)], scenario)

    threads = []
    for client, scenario in runs:
        thread = threading.Thread(target=run, args=(client, scenario), daemon=True)
        thread.start()
        threads.append((f"{scenario}/{client}", thread))
    began = time.monotonic()
    go.set()
    for name, thread in threads:
        thread.join(max(0.0, began + CUTOFF - time.monotonic()))
        seen = results.get(name, f"still waiting after {CUTOFF:g} s")
        print(json.dumps({"run": name, "seen": seen}), flush=True)
    print(json.dumps({"sdks": "done"}), flush=True)

    sys.stdin.read()
    with LOG_LOCK:
        log = {run: [{"t": t, "sent": sent, "other": o, "key": k, "body": b}
                     for t, sent, o, k, b in requests]
               for run, requests in LOG.items()}
    print(json.dumps({"log": log}), flush=True)
    # The threads still sleeping for a long Retry-After are not waited for.
    os._exit(0)


if __name__ == "__main__":
    sys.exit(main(sys.argv))
