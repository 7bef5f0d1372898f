"""Sampling settings beyond the temperature (top-p, presence penalty) reach the endpoint's request only when a
caller sets them, and are part of the response cache key, so a saved sampled run replays exactly."""

from __future__ import annotations

import pytest

from core.engine.llm import LLM, Endpoint
from core.engine.llm.cache import ResponseCache
from tests.fake_endpoint import FakeEndpoint, streams

ASK = [{"role": "user", "content": "write a background document"}]


@pytest.fixture
def server():
    fake = FakeEndpoint(streams("first"), streams("second"), streams("third"))
    yield fake
    fake.close()


def test_top_p_and_presence_penalty_go_in_the_request_only_when_set(server):
    llm = LLM(Endpoint(base_url=server.url, model="fake", max_retries=0), cache_mode="off")
    llm.complete(ASK, temperature=1.2, top_p=0.9, presence_penalty=1.0, max_tokens=256)
    llm.complete(ASK)
    sampled, plain = server.requests
    assert (sampled["temperature"], sampled["top_p"], sampled["presence_penalty"], sampled["max_tokens"]) == (
        1.2,
        0.9,
        1.0,
        256,
    )
    assert "top_p" not in plain and "presence_penalty" not in plain


def test_a_saved_sampled_reply_replays_only_under_the_same_sampling(server, tmp_path):
    cache = ResponseCache(tmp_path / "cache.sqlite")
    llm = LLM(Endpoint(base_url=server.url, model="fake", max_retries=0), cache=cache, cache_mode="always")
    sample = {"temperature": 1.2, "top_p": 0.9, "presence_penalty": 1.0}
    assert llm.complete(ASK, **sample).text == "first"
    again = llm.complete(ASK, **sample)
    assert again.text == "first" and again.usage.cached and len(server.requests) == 1
    assert llm.complete(ASK, **{**sample, "top_p": 0.5}).text == "second"
    assert llm.complete(ASK, **{**sample, "presence_penalty": 0.0}).text == "third"
    assert len(server.requests) == 3 and len(cache) == 3
