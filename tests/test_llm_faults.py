"""The client against a local fake OpenAI-compatible server that misbehaves on purpose."""

from __future__ import annotations

import socket
from concurrent.futures import ThreadPoolExecutor

import pytest
from pydantic import BaseModel

from core.engine.llm import LLM, Endpoint, LLMError, LLMParseError, stream
from tests.fake_endpoint import FakeEndpoint, error, raw, streams
from tests.waiting import Gate, patience, wait_until


class Pick(BaseModel):
    reasoning: str
    answer: str


@pytest.fixture
def serve():
    servers = []

    def start(*steps, timeout=5.0, retries=2):
        server = FakeEndpoint(*steps)
        servers.append(server)
        llm = LLM(Endpoint(base_url=server.url, model="fake", timeout=timeout, max_retries=retries), cache_mode="off")
        return server, llm

    yield start
    for server in servers:
        server.close()


GOOD = streams('{"reasoning": "short", "answer": "B"}')
ASK = [{"role": "user", "content": "pick one"}]


def test_server_error_then_recovery(serve):
    server, llm = serve(error(500), GOOD)
    reply = llm.complete(ASK, schema=Pick)
    assert reply.parsed.answer == "B"
    assert len(server.requests) == 2
    assert reply.usage.prompt_tokens == 11 and reply.usage.completion_tokens == 7 and not reply.usage.cached


def test_rate_limited_then_recovery(serve):
    server, llm = serve(error(429, "slow down"), GOOD)
    assert llm.complete(ASK).text == '{"reasoning": "short", "answer": "B"}'
    assert len(server.requests) == 2


def test_persistent_500_is_a_clear_error_after_the_last_try(serve):
    server, llm = serve(error(500), retries=1)
    with pytest.raises(LLMError, match=r"answered HTTP 500"):
        llm.complete(ASK)
    assert len(server.requests) == 2  # one try plus one retry


def test_garbage_body_is_a_clear_error(serve):
    _, llm = serve(raw(b"<html>not json at all", "text/html"), retries=0)
    with pytest.raises(LLMError, match="not a chat completion"):
        llm.complete(ASK)


def test_truncated_json_is_repaired_once(serve):
    server, llm = serve(streams('{"reasoning": "the patient has'), GOOD)
    reply = llm.complete(ASK, schema=Pick)
    assert reply.parsed == Pick(reasoning="short", answer="B")
    assert reply.usage.calls == 2 and reply.usage.prompt_tokens == 22
    repair = server.requests[1]["messages"]
    assert repair[-2]["role"] == "assistant" and "could not be used" in repair[-1]["content"]
    assert server.requests[0]["response_format"]["type"] == "json_schema"


def test_json_that_never_parses_is_a_parse_error(serve):
    _, llm = serve(streams('{"reasoning": "cut'))
    with pytest.raises(LLMParseError, match="could not be parsed as Pick after one repair") as info:
        llm.complete(ASK, schema=Pick)
    assert info.value.raw == '{"reasoning": "cut'


def test_too_slow_is_a_timeout_not_a_hang(serve):
    # a reply that comes only after the tests' whole patience: a client that waited for it would pass no timeout
    _, llm = serve(streams("late", delay=patience()), timeout=0.5, retries=0)
    with pytest.raises(LLMError, match=r"did not (answer|finish the reply) within"):
        llm.complete(ASK)


def test_the_timeout_bounds_a_whole_call_however_steadily_it_writes(serve, monkeypatch):
    """A reply that keeps coming (each chunk well within any wait for bytes) still ends at the call's limit. The
    limit's clock is the test's: each held chunk is let through once the clock has moved 10 s on."""
    now = [0.0]
    monkeypatch.setattr(stream, "clock", lambda: now[0], raising=False)
    gate = Gate()
    steady = streams("one two three four five six", pieces=6, gate=gate, held_at=(1, 2, 3, 4, 5))
    _, llm = serve(steady, timeout=30, retries=0)
    written: list[str] = []
    with ThreadPoolExecutor(1) as pool:
        call = pool.submit(llm.complete, ASK, on_text=written.append)
        for chunks in range(1, 5):  # 40 s of writing in all: past the 30 s a call may take
            wait_until(lambda n=chunks: len(written) == n and gate.held == 1, f"chunk {chunks} in, the next held")
            now[0] += 10.0
            gate.let(1)
        with pytest.raises(LLMError, match=r"did not finish the reply within the 30 s a call may take") as info:
            call.result(timeout=patience())
        # cut while the endpoint was still writing, not ended by it: its last chunk never came, and the endpoint
        # reaches its gate for it in its own time (on a loaded core, after the client has given up)
        assert len(written) == 5
        wait_until(lambda: gate.held == 1, "the endpoint holding its last chunk")
        gate.open()
    assert info.value.raw.startswith("one two")  # what had arrived is kept


def test_unreachable_endpoint_names_the_url():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]  # bound but not listening: connection refused
        url = f"http://127.0.0.1:{port}/v1"
        llm = LLM(Endpoint(base_url=url, model="x", timeout=2, max_retries=0), cache_mode="off")
        with pytest.raises(LLMError, match=f"could not reach the LLM endpoint at {url}"):
            llm.complete(ASK)


def test_cache_serves_repeat_calls_without_the_server(serve, tmp_path):
    from core.engine.llm.cache import ResponseCache

    server, _ = serve(GOOD)
    llm = LLM(
        Endpoint(base_url=server.url, model="fake", timeout=5, max_retries=0),
        cache=ResponseCache(tmp_path / "c.sqlite"),
    )
    first = llm.complete(ASK, schema=Pick)
    second = llm.complete(ASK, schema=Pick)
    assert not first.usage.cached and second.usage.cached
    assert second.parsed == first.parsed and second.usage.prompt_tokens == 11
    assert len(server.requests) == 1
    llm.complete(ASK, schema=Pick, temperature=1.0)  # sampled calls are not cached in "auto" mode
    llm.complete(ASK, schema=Pick, temperature=1.0)
    assert len(server.requests) == 3
