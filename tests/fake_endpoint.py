"""A tiny OpenAI-compatible chat endpoint on 127.0.0.1 that streams server-sent events, and misbehaves on
purpose when told to: slow chunks, HTTP errors, bodies that are not a chat completion at all; and holds replies at a
``Gate`` until the test lets them go."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from tests.waiting import Gate

# seconds (scaled) a reply may be held: browser tests reload and navigate around a held call for a while
HELD_AT_MOST = 600.0


@dataclass
class Step:
    """One answer: either a streamed reply (``text`` in ``pieces`` chunks, ``chunk_delay`` seconds apart) or a
    raw ``body`` with ``status``. ``delay``: seconds before anything is sent (the prompt being read)."""

    text: str | None = None
    pieces: int = 3
    chunk_delay: float = 0.0
    finish_reason: str | None = "stop"
    usage: tuple[int, int] | None = (11, 7)
    status: int = 200
    body: bytes = b""
    content_type: str = "application/json"
    delay: float = 0.0
    # What a reasoning model shows of its reasoning, streamed before the reply under ``reasoning_field`` (DeepSeek's
    # and vLLM's reasoning parsers' ``reasoning_content``).
    reasoning: str = ""
    reasoning_field: str = "reasoning_content"
    # Where the reply waits for ``gate``: 0 before anything is sent (the prompt being read), n after n chunks.
    gate: Gate | None = None
    held_at: tuple[int, ...] = (0,)


def streams(text: str, **kw) -> Step:
    return Step(text=text, **kw)


def error(status: int, message: str = "boom", **kw) -> Step:
    return Step(status=status, body=json.dumps({"error": {"message": message}}).encode(), **kw)


def raw(body: bytes, content_type: str = "text/event-stream", **kw) -> Step:
    return Step(body=body, content_type=content_type, **kw)


def sse(*events: object) -> bytes:
    """Server-sent events from objects (JSON-encoded) or ready strings, ended by [DONE]."""
    return b"".join(sse_event(e) for e in events) + b"data: [DONE]\n\n"


def sse_event(data: object) -> bytes:
    return f"data: {data if isinstance(data, str) else json.dumps(data)}\n\n".encode()


def completion(text: str, finish_reason: str | None = "stop", usage: tuple[int, int] | None = (11, 7)) -> dict:
    prompt, completion_tokens = usage or (0, 0)
    return {
        "id": "x",
        "object": "chat.completion",
        "created": 0,
        "model": "fake",
        "choices": [{"index": 0, "finish_reason": finish_reason, "message": {"role": "assistant", "content": text}}],
        "usage": {
            "prompt_tokens": prompt,
            "completion_tokens": completion_tokens,
            "total_tokens": prompt + completion_tokens,
        },
    }


def chunk(content: str | None = None, finish_reason: str | None = None, **side: str) -> dict:
    delta = {**side, **({} if content is None else {"content": content})}
    return {
        "id": "x",
        "object": "chat.completion.chunk",
        "created": 0,
        "model": "fake",
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish_reason}],
    }


class FakeEndpoint:
    """Answers each request with the next step (the last one repeats), or with ``script(request) -> Step``.
    ``requests`` holds the JSON bodies received; ``disconnects`` counts streams whose client went away."""

    def __init__(self, *steps: Step, script: Callable[[dict], Step] | None = None, models: tuple[str, ...] = ()):
        self.steps = list(steps)
        self.models = models  # what GET /models lists
        self.script = script
        self.requests: list[dict] = []
        self.headers: list[dict[str, str]] = []
        self.paths: list[str] = []  # each request's path and query
        self.disconnects = 0
        self._lock = threading.Lock()
        outer = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args):
                pass

            def do_GET(self):
                with outer._lock:
                    outer.headers.append(dict(self.headers))
                    outer.paths.append(self.path)
                body = json.dumps(
                    {
                        "object": "list",
                        "data": [{"id": m, "object": "model", "created": 0, "owned_by": "fake"} for m in outer.models],
                    }
                ).encode()
                self.send_response(200 if self.path.rstrip("/").endswith("/models") else 404)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def do_POST(self):
                body = self.rfile.read(int(self.headers.get("Content-Length", 0)) or 0)
                request = json.loads(body or b"{}")
                with outer._lock:
                    outer.requests.append(request)
                    outer.headers.append(dict(self.headers))
                    outer.paths.append(self.path)
                    step = (
                        outer.script(request)
                        if outer.script
                        else (outer.steps.pop(0) if len(outer.steps) > 1 else outer.steps[0])
                    )
                try:
                    outer._answer(self, step, bool(request.get("stream")))
                except (BrokenPipeError, ConnectionResetError):
                    with outer._lock:
                        outer.disconnects += 1

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"
        threading.Thread(target=self.httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()

    @staticmethod
    def _answer(handler: BaseHTTPRequestHandler, step: Step, stream: bool) -> None:
        def gate(at: int) -> None:
            if step.gate is not None and at in step.held_at:
                step.gate.wait(limit=HELD_AT_MOST)

        gate(0)
        time.sleep(step.delay)
        if step.text is not None and not stream:  # a client that does not stream gets the whole completion, as late
            time.sleep(step.chunk_delay * (step.pieces - 1))
            step = raw(json.dumps(completion(step.text, step.finish_reason, step.usage)).encode(), "application/json")
        if step.text is None:
            handler.send_response(step.status)
            handler.send_header("Content-Type", step.content_type)
            handler.send_header("Content-Length", str(len(step.body)))
            handler.end_headers()
            handler.wfile.write(step.body)
            return
        handler.send_response(200)
        handler.send_header("Content-Type", "text/event-stream")
        handler.send_header("Connection", "close")
        handler.end_headers()
        if step.reasoning:
            handler.wfile.write(sse_event(chunk(**{step.reasoning_field: step.reasoning})))
        size = max(1, -(-len(step.text) // step.pieces))
        parts = [step.text[i : i + size] for i in range(0, len(step.text), size)] or [""]
        for i, part in enumerate(parts):
            last = i == len(parts) - 1
            handler.wfile.write(sse_event(chunk(part, step.finish_reason if last else None)))
            handler.wfile.flush()
            gate(i + 1)
            if not last:
                time.sleep(step.chunk_delay)
        if step.usage:
            prompt, written = step.usage
            handler.wfile.write(
                sse_event(
                    {
                        **chunk(),
                        "choices": [],
                        "usage": {
                            "prompt_tokens": prompt,
                            "completion_tokens": written,
                            "total_tokens": prompt + written,
                        },
                    }
                )
            )
        handler.wfile.write(b"data: [DONE]\n\n")
        handler.wfile.flush()
        handler.close_connection = True

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()
