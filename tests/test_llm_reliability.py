"""What the client keeps and shows: only accepted replies are cached, failed attempts are counted, and
credentials inside a base URL never reach a message, the store, a log or a cache key."""

from __future__ import annotations

import base64
import logging

import pytest
from pydantic import BaseModel

from core.engine.llm import LLM, Endpoint, LLMError, LLMParseError
from core.engine.llm.cache import ResponseCache, cache_key
from core.engine.llm.ladder import Learned
from core.engine.llm.request import Asked, build
from core.engine.question import Question
from core.engine.runner import execute
from core.engine.store import RunStore
from tests.fake_endpoint import FakeEndpoint, error, streams

ASK = [{"role": "user", "content": "pick one"}]
MC = Question(text="Which hormone lowers blood glucose?", options={"A": "Insulin", "B": "Glucagon"})


class Pick(BaseModel):
    reasoning: str
    answer: str


@pytest.fixture
def endpoint(tmp_path):
    servers = []

    def start(*steps, retries=0, cached=True, url=None):
        server = FakeEndpoint(*steps)
        servers.append(server)
        llm = LLM(
            Endpoint(base_url=url(server) if url else server.url, model="fake", timeout=10, max_retries=retries),
            cache=ResponseCache(tmp_path / "cache.sqlite") if cached else None,
            cache_mode="auto" if cached else "off",
        )
        return server, llm

    yield start
    for server in servers:
        server.close()


GOOD = '{"reasoning": "short", "answer": "B"}'


def test_a_reply_cut_off_by_the_token_budget_replays_and_still_says_it_was_cut(endpoint):
    server, llm = endpoint(streams("The answer is", finish_reason="length"), streams("The answer is B."))
    assert llm.complete(ASK).finish_reason == "length"
    again = llm.complete(ASK)  # the same request is cut at the same place: replayed, not asked again
    assert (again.text, again.finish_reason, again.usage.cached) == ("The answer is", "length", True)
    assert len(server.requests) == 1


def test_a_stream_that_ended_without_saying_why_is_a_dropped_connection_and_not_cached(endpoint):
    server, llm = endpoint(streams("The answer is", finish_reason=None), streams("The answer is B."))
    with pytest.raises(LLMError, match="closed before the reply was finished") as info:
        llm.complete(ASK)
    assert info.value.raw == "The answer is" and not isinstance(info.value, LLMParseError)
    assert llm.complete(ASK).text == "The answer is B."  # asked again, not replayed
    assert llm.complete(ASK).usage.cached and len(server.requests) == 2


def test_a_reply_that_never_parsed_is_not_replayed(endpoint):
    server, llm = endpoint(streams('{"reasoning": "cut'), streams('{"reasoning": "cut again'), streams(GOOD))
    with pytest.raises(LLMParseError):
        llm.complete(ASK, schema=Pick)
    assert llm.complete(ASK, schema=Pick).parsed.answer == "B"  # the endpoint is asked again
    assert len(server.requests) == 3


def test_a_reply_whose_repair_call_failed_stays_in_the_trace(endpoint):
    server, llm = endpoint(streams('{"reasoning": "The insulin', finish_reason="length"), error(500), cached=False)
    run = execute("cot", MC, llm=llm)
    assert run.status == "error" and len(server.requests) == 2
    said = [e.payload for e in run.events if e.payload.kind == "agent_message"]
    assert [m.text for m in said] == ['{"reasoning": "The insulin']  # the cut reply, not an empty message
    assert run.totals.calls == 2 and "HTTP 500" in run.events[-1].payload.message


def test_an_unusable_reply_cached_by_an_earlier_version_is_dropped(endpoint, tmp_path):
    server, llm = endpoint(streams(GOOD))
    wire = build(llm.profile, llm.model_name, Asked(), ASK, Pick, llm.profile.dialect, Learned())
    key = cache_key(llm.backend, wire.messages, wire.key_params)
    llm.cache.put(key, "fake", '{"reasoning": "cut', 5, 5)
    reply = llm.complete(ASK, schema=Pick)
    assert reply.parsed.answer == "B" and not reply.usage.cached and len(server.requests) == 1
    assert llm.cache.get(key)["text"] == GOOD  # the good reply took its place
    assert llm.complete(ASK, schema=Pick).usage.cached


def test_failed_attempts_count_in_the_run_totals(endpoint):
    server, llm = endpoint(error(500), retries=2, cached=False)
    run = execute("cot", MC, llm=llm)
    assert run.status == "error" and len(server.requests) == 3
    assert run.totals.calls == 3 and run.events[-1].usage.calls == 3 and run.events[-1].usage.seconds > 0


def test_a_retried_call_counts_every_attempt(endpoint):
    server, llm = endpoint(error(503), streams('{"reasoning": "r", "answer": "A"}'), retries=1, cached=False)
    run = execute("cot", MC, llm=llm)
    assert run.status == "ok" and run.totals.calls == 2 and len(server.requests) == 2


SECRET = "s3cret-key"


def with_credentials(server: FakeEndpoint) -> str:
    return server.url.replace("http://", f"http://medrag:{SECRET}@")


def test_credentials_in_the_base_url_never_show(endpoint, tmp_path, caplog):
    caplog.set_level(logging.DEBUG)  # every library's log, httpx's request lines included
    server, llm = endpoint(streams(GOOD), url=with_credentials)
    assert llm.complete(ASK, schema=Pick).parsed.answer == "B"
    sent = server.headers[0]["Authorization"]
    assert base64.b64decode(sent.removeprefix("Basic ")).decode() == f"medrag:{SECRET}"  # still used to connect
    assert SECRET not in llm.backend and llm.backend.endswith("@ http://***@127.0.0.1:" + server.url.split(":")[-1])
    server.steps = [error(500, f"upstream http://medrag:{SECRET}@10.0.0.1 refused")]  # a server that echoes it
    with pytest.raises(LLMError) as info:
        llm.complete([{"role": "user", "content": "other"}])
    assert SECRET not in str(info.value) and "http://***@127.0.0.1" in str(info.value)
    store = RunStore(tmp_path / "studio.sqlite")
    run = execute("cot", MC, llm=llm, store=store)
    assert run.status == "error" and SECRET not in run.events[-1].payload.message
    stored = b"".join(p.read_bytes() for p in tmp_path.glob("*.sqlite*"))
    assert SECRET.encode() not in stored
    assert SECRET not in caplog.text and "HTTP Request" in caplog.text
