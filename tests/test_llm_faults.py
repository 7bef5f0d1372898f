"""The client against a local fake OpenAI-compatible server that misbehaves on purpose."""

from __future__ import annotations

import json
import socket
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from pydantic import BaseModel

from core.llm import LLM, Endpoint, LLMError, LLMParseError


class Pick(BaseModel):
    reasoning: str
    answer: str


def completion(content: str) -> bytes:
    return json.dumps({
        "id": "x", "object": "chat.completion", "created": 0, "model": "fake",
        "choices": [{"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": content}}],
        "usage": {"prompt_tokens": 11, "completion_tokens": 7, "total_tokens": 18},
    }).encode()


class FakeServer:
    """Answers each request with the next scripted step: (status, body bytes, delay seconds)."""

    def __init__(self, steps):
        self.steps = list(steps)
        self.requests: list[dict] = []
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def do_POST(self):
                length = int(self.headers.get("Content-Length", 0))
                outer.requests.append(json.loads(self.rfile.read(length) or b"{}"))
                status, body, delay = outer.steps.pop(0) if len(outer.steps) > 1 else outer.steps[0]
                time.sleep(delay)
                try:
                    self.send_response(status)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(body)))
                    self.end_headers()
                    self.wfile.write(body)
                except (BrokenPipeError, ConnectionResetError):
                    pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def close(self):
        self.httpd.shutdown()
        self.httpd.server_close()


@pytest.fixture
def serve():
    servers = []

    def start(*steps, timeout=5.0, retries=2):
        server = FakeServer(steps)
        servers.append(server)
        llm = LLM(Endpoint(base_url=server.url, model="fake", timeout=timeout, max_retries=retries), cache_mode="off")
        return server, llm

    yield start
    for server in servers:
        server.close()


GOOD = (200, completion('{"reasoning": "short", "answer": "B"}'), 0)
ASK = [{"role": "user", "content": "pick one"}]


def test_server_error_then_recovery(serve):
    server, llm = serve((500, b'{"error": {"message": "boom"}}', 0), GOOD)
    reply = llm.complete(ASK, schema=Pick)
    assert reply.parsed.answer == "B"
    assert len(server.requests) == 2
    assert reply.usage.prompt_tokens == 11 and reply.usage.completion_tokens == 7 and not reply.usage.cached


def test_rate_limited_then_recovery(serve):
    server, llm = serve((429, b'{"error": {"message": "slow down"}}', 0), GOOD)
    assert llm.complete(ASK).text == '{"reasoning": "short", "answer": "B"}'
    assert len(server.requests) == 2


def test_persistent_500_is_a_clear_error_after_the_last_try(serve):
    server, llm = serve((500, b'{"error": {"message": "boom"}}', 0), retries=1)
    with pytest.raises(LLMError, match=r"answered HTTP 500"):
        llm.complete(ASK)
    assert len(server.requests) == 2  # one try plus one retry


def test_garbage_body_is_a_clear_error(serve):
    _, llm = serve((200, b"<html>not json at all", 0), retries=0)
    with pytest.raises(LLMError, match="not a chat completion"):
        llm.complete(ASK)


def test_truncated_json_is_repaired_once(serve):
    server, llm = serve((200, completion('{"reasoning": "the patient has'), 0), GOOD)
    reply = llm.complete(ASK, schema=Pick)
    assert reply.parsed == Pick(reasoning="short", answer="B")
    assert reply.usage.calls == 2 and reply.usage.prompt_tokens == 22
    repair = server.requests[1]["messages"]
    assert repair[-2]["role"] == "assistant" and "could not be used" in repair[-1]["content"]
    assert server.requests[0]["response_format"]["type"] == "json_schema"


def test_json_that_never_parses_is_a_parse_error(serve):
    _, llm = serve((200, completion('{"reasoning": "cut'), 0))
    with pytest.raises(LLMParseError, match="could not be parsed as Pick after one repair") as info:
        llm.complete(ASK, schema=Pick)
    assert info.value.raw == '{"reasoning": "cut'


def test_too_slow_is_a_timeout_not_a_hang(serve):
    _, llm = serve((200, completion("late"), 3), timeout=0.5, retries=0)
    started = time.perf_counter()
    with pytest.raises(LLMError, match=r"did not answer within"):
        llm.complete(ASK)
    assert time.perf_counter() - started < 3


def test_unreachable_endpoint_names_the_url():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]  # bound but not listening: connection refused
        url = f"http://127.0.0.1:{port}/v1"
        llm = LLM(Endpoint(base_url=url, model="x", timeout=2, max_retries=0), cache_mode="off")
        with pytest.raises(LLMError, match=f"could not reach the LLM endpoint at {url}"):
            llm.complete(ASK)


def test_cache_serves_repeat_calls_without_the_server(serve, tmp_path):
    from core.llm.cache import ResponseCache

    server, _ = serve(GOOD)
    llm = LLM(Endpoint(base_url=server.url, model="fake", timeout=5, max_retries=0), cache=ResponseCache(tmp_path / "c.sqlite"))
    first = llm.complete(ASK, schema=Pick)
    second = llm.complete(ASK, schema=Pick)
    assert not first.usage.cached and second.usage.cached
    assert second.parsed == first.parsed and second.usage.prompt_tokens == 11
    assert len(server.requests) == 1
    llm.complete(ASK, schema=Pick, temperature=1.0)  # sampled calls are not cached in "auto" mode
    llm.complete(ASK, schema=Pick, temperature=1.0)
    assert len(server.requests) == 3
