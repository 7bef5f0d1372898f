"""Streaming and prompt cancellation through the real client, against a local endpoint that streams slowly."""

from __future__ import annotations

import threading

import pytest
from pydantic import BaseModel

from core.engine.llm import LLM, Endpoint, LLMCancelled
from core.engine.llm.cache import ResponseCache
from core.engine.llm.tokens import tokens_of
from core.engine.question import Question
from core.engine.runner import execute
from tests.fake_endpoint import FakeEndpoint, streams
from tests.fakes import ScriptedLLM
from tests.waiting import Gate, wait_until

ASK = [{"role": "user", "content": "pick one"}]


class Pick(BaseModel):
    reasoning: str
    answer: str


@pytest.fixture
def endpoint():
    servers = []

    def start(*steps, cache=None, **kw):
        server = FakeEndpoint(*steps, **kw)
        servers.append(server)
        llm = LLM(
            Endpoint(base_url=server.url, model="fake", timeout=30, max_retries=0),
            cache=cache,
            cache_mode="auto" if cache is not None else "off",
        )
        return server, llm

    yield start
    for server in servers:
        server.close()


def cancel_when(condition, what: str) -> threading.Event:
    """An event set from another thread once ``condition()`` holds (never, if it never does)."""
    cancel = threading.Event()
    threading.Thread(target=lambda: (wait_until(condition, what), cancel.set()), daemon=True).start()
    return cancel


def _stream_threads() -> int:
    return sum(t.name == "llm-stream" for t in threading.enumerate())


def test_text_grows_as_it_streams_and_usage_comes_from_the_last_chunk(endpoint):
    server, llm = endpoint(streams('{"reasoning": "short", "answer": "B"}', pieces=5, usage=(40, 9)))
    seen: list[str] = []
    reply = llm.complete(ASK, schema=Pick, on_text=seen.append)
    assert reply.parsed == Pick(reasoning="short", answer="B") and reply.finish_reason == "stop"
    assert len(seen) == 5 and seen[-1] == reply.text
    assert all(later.startswith(earlier) and len(later) > len(earlier) for earlier, later in zip(seen, seen[1:]))
    assert (reply.usage.prompt_tokens, reply.usage.completion_tokens, reply.usage.calls) == (40, 9, 1)
    assert server.requests[0]["stream"] is True and server.requests[0]["stream_options"] == {"include_usage": True}


def test_tokens_are_counted_when_the_endpoint_reports_no_usage(endpoint):
    _, llm = endpoint(streams("one two three four", pieces=4, usage=None))
    reply = llm.complete(ASK)
    assert reply.usage.completion_tokens == 4  # one a chunk, as servers stream them
    assert reply.usage.prompt_tokens == tokens_of("pick one")  # the studio's one characters-per-token rule


def test_cancel_ends_a_stream_at_once_and_the_server_sees_the_client_leave(endpoint):
    gate = Gate()  # five pieces are written, then the rest is held for good: only the cut ends the call
    server, llm = endpoint(streams("x" * 40, pieces=40, gate=gate, held_at=(5,)))
    cancel, seen = threading.Event(), []

    def arrived(text: str) -> None:
        seen.append(text)
        if len(seen) == 5:
            cancel.set()

    with pytest.raises(LLMCancelled) as info:
        llm.complete(ASK, on_text=arrived, cancel=cancel)
    assert seen and info.value.raw == seen[-1] and len(info.value.raw) == 5  # what had arrived is kept
    assert info.value.usage.calls == 1 and info.value.usage.completion_tokens == len(seen)
    gate.open()  # the server writes on into the cut connection
    wait_until(lambda: server.disconnects, "the server to see the client leave")
    assert server.disconnects == 1  # the connection was cut, so a real server stops generating


def test_cancel_while_the_endpoint_still_reads_the_prompt(endpoint):
    gate = Gate()  # nothing is sent until the call has been cancelled, as a long prompt on a slow CPU
    server, llm = endpoint(streams("late", gate=gate))
    with pytest.raises(LLMCancelled):
        llm.complete(ASK, cancel=cancel_when(lambda: gate.held, "the endpoint to read the prompt"))
    # the socket was shut down, so the worker did not wait for a reply that is still held
    wait_until(lambda: not _stream_threads(), "the stream's worker to end")
    assert gate.held == 1
    gate.open()


def test_a_set_cancel_sends_nothing(endpoint):
    server, llm = endpoint(streams("never"))
    cancel = threading.Event()
    cancel.set()
    with pytest.raises(LLMCancelled):
        llm.complete(ASK, cancel=cancel)
    assert server.requests == []


def test_a_cached_reply_is_shown_once_whole(endpoint, tmp_path):
    server, llm = endpoint(streams('{"reasoning": "r", "answer": "A"}'), cache=ResponseCache(tmp_path / "c.sqlite"))
    llm.complete(ASK, schema=Pick)
    seen: list[str] = []
    again = llm.complete(ASK, schema=Pick, on_text=seen.append)
    assert again.usage.cached and seen == [again.text] and len(server.requests) == 1


MC = Question(text="Which hormone lowers blood glucose?", options={"A": "Insulin", "B": "Glucagon"})


def test_a_run_streams_partials_to_its_sinks(endpoint):
    _, llm = endpoint(streams('{"reasoning": "Insulin lowers it.", "answer": "A"}', pieces=4))
    partials = []
    run = execute("cot", MC, llm=llm, stream_sinks=[partials.append])
    assert run.status == "ok" and run.answer.choice == "A"
    assert [p.done for p in partials] == [False] * 4 + [True]
    assert {(p.run_id, p.agent) for p in partials} == {(run.id, run.events[0].agent)}
    assert partials[-1].text == run.events[0].payload.text


def test_cancel_stops_a_run_in_seconds_with_an_event_saying_so(endpoint):
    gate = Gate()  # a few pieces are written, then the rest is held for good: only the cut ends the run
    _, llm = endpoint(
        streams('{"reasoning": "' + "slow " * 40 + '", "answer": "A"}', pieces=40, gate=gate, held_at=(4,))
    )
    cancel = threading.Event()
    stop_once_read = [lambda partial: partial.text.startswith('{"reasoning": "sl') and cancel.set()]
    run = execute("cot", MC, llm=llm, cancel=cancel, stream_sinks=stop_once_read)
    gate.open()
    assert run.status == "cancelled" and run.events[-1].payload.error_type == "cancelled"
    partial = run.events[0]
    assert partial.kind == "agent_message" and partial.payload.text.startswith('{"reasoning": "sl')
    assert run.totals.calls == 1  # the stopped call still counts


def test_scripted_llm_streams_in_chunks_and_honours_cancel():
    seen: list[str] = []
    reply = ScriptedLLM().enqueue("abcdefghi").complete(ASK, on_text=seen.append)
    assert seen == ["abc", "abcdef", "abcdefghi"] and reply.text == "abcdefghi"
    held = Gate()  # never opened: only the cancel ends the call
    with pytest.raises(LLMCancelled):
        ScriptedLLM(gate=held).enqueue("abcdefghi").complete(ASK, cancel=cancel_when(lambda: held.held, "the call"))
