"""What each agent reads is sized to the backend: as many snippets as the context window holds on an endpoint (so a
large one reads all 32, as the toolkit does), at most the embedded server's per-call reading limit on the laptop
model; and every call that reads snippets says in the trace which it read of how many it was given."""

from __future__ import annotations

import dataclasses

import pytest

from core.engine.llm.embedded import SHIPPED
from core.engine.llm.tokens import CHARS_PER_TOKEN
from core.engine.runner import execute
from core.engine.trace import AgentMessage
from tests import test_methods_discuss, test_methods_mass, test_methods_medrgag, test_methods_sema
from tests.fakes import ListRetriever, ScriptedLLM, make_hits
from tests.test_methods_medrag import MC, long_hits

ANSWER = {"reasoning": "r", "answer": "B", "cited_ids": []}


class LaptopLLM(ScriptedLLM):
    """A scripted model that reports the embedded server's window and reading limit."""

    @property
    def context_window(self) -> int | None:
        return SHIPPED.slot_context

    @property
    def reading_tokens(self) -> int | None:
        return SHIPPED.read_tokens


def with_window(llm: ScriptedLLM, window: int | None) -> ScriptedLLM:
    llm.endpoint = dataclasses.replace(llm.endpoint, context_window=window)
    return llm


def documents(call: dict) -> str:
    return call["messages"][1]["content"].split("\n\nQuestion:", 1)[0]


def readers(run) -> list[AgentMessage]:
    return [e.payload for e in run.events if e.kind == "agent_message" and e.payload.read is not None]


def test_a_large_endpoint_reads_all_32_snippets_and_a_small_one_what_fits():
    big = with_window(ScriptedLLM().enqueue(ANSWER), 128_000)
    run = execute("medrag", MC, llm=big, retriever=ListRetriever(long_hits(40, 900)))
    (reader,) = readers(run)
    assert (len(reader.read), reader.offered) == (32, 32)

    small = with_window(ScriptedLLM().enqueue(ANSWER), 4096)
    run = execute("medrag", MC, llm=small, retriever=ListRetriever(long_hits(40, 900)))
    (reader,) = readers(run)
    call = small.calls[0]
    assert reader.offered == 32 and 5 <= len(reader.read) < 32
    assert sum(len(m["content"]) for m in call["messages"]) // CHARS_PER_TOKEN + call["max_tokens"] <= 4096
    assert all(f"[{i}]" in documents(call) for i in reader.read)  # the trace names exactly what the prompt held
    assert not any(
        f"[{h.snippet_id}]" in documents(call) for h in long_hits(40, 900) if h.snippet_id not in reader.read
    )


def test_an_endpoint_that_does_not_say_is_read_as_the_authors_model_window():
    llm = with_window(ScriptedLLM().enqueue(ANSWER), None)
    run = execute("medrag", MC, llm=llm, retriever=ListRetriever(long_hits(40, 900)))
    (reader,) = readers(run)
    # 16,384 tokens at three characters a token hold all 32 of ~950 characters
    assert len(reader.read) == 32


def test_the_embedded_model_reads_at_most_its_reading_limit_per_call():
    limit = SHIPPED.read_tokens * CHARS_PER_TOKEN
    llm = LaptopLLM().enqueue(ANSWER)
    run = execute("medrag", MC, llm=llm, retriever=ListRetriever(long_hits(40, 900)))
    (reader,) = readers(run)
    assert limit - 1000 < len(documents(llm.calls[0])) <= limit + 20  # "Documents:" heading
    assert len(reader.read) < 32

    capped = LaptopLLM().enqueue(ANSWER)  # a knob below the limit still caps
    execute("medrag", MC, {"max_doc_chars": 2000}, llm=capped, retriever=ListRetriever(long_hits(40, 900)))
    assert len(documents(capped.calls[0])) <= 2000 + 20


def test_imedrag_follow_ups_read_at_most_the_embedded_reading_limit():
    from tests.test_methods_imedrag_budgets import LOOKUP, scripted

    llm = scripted(answer_chars=50)
    laptop = LaptopLLM()
    laptop.rules = llm.rules
    run = execute("imedrag", MC, {"rounds": 1}, llm=laptop, retriever=ListRetriever(long_hits(40, 900)))
    lookups = [c for c in laptop.calls if LOOKUP in c["messages"][1]["content"]]
    assert lookups and all(
        len(c["messages"][1]["content"]) < SHIPPED.read_tokens * CHARS_PER_TOKEN + 600 for c in lookups
    )
    responders = readers(run)
    assert len(responders) == 3 and all(p.offered == 32 and 0 < len(p.read) < 32 for p in responders)


def two_corpora_retriever() -> ListRetriever:
    return test_methods_medrgag.two_corpora()


CASES = {
    "discuss": (
        lambda: test_methods_discuss.scripted(),
        lambda: ListRetriever(make_hits(12)),
        {"Decision-maker", "Reader"},
    ),
    "mass": (
        lambda: test_methods_mass.scripted(),
        lambda: ListRetriever(make_hits(5)),
        {"Summarizer", "Extractor", "Reasoner"},
    ),
    "sema": (
        lambda: test_methods_sema.scripted(sufficient_at=1),
        lambda: ListRetriever(make_hits(30)),
        {"E-Agent", "A-Agent"},
    ),
    "medrgag": (lambda: test_methods_medrgag.scripted(), two_corpora_retriever, {"Summarizer", "Integrator", "Reader"}),
}


@pytest.mark.parametrize("name", list(CASES))
def test_every_agent_that_reads_snippets_says_which_it_read(name):
    make_llm, make_retriever, agents = CASES[name]
    retriever = make_retriever()
    run = execute(name, MC, llm=make_llm(), retriever=retriever)
    assert run.status == "ok", run.events[-1].payload
    reading = [e for e in run.events if e.kind == "agent_message" and e.payload.read is not None]
    assert {e.agent for e in reading} == agents
    known: set[str] = {h.snippet_id for e in run.events if e.kind == "retrieval" for h in e.payload.hits}
    known |= {e.payload.doc_id for e in run.events if e.kind == "generated_doc"}
    for e in reading:
        assert e.payload.read and set(e.payload.read) <= known, (e.agent, e.payload.read)
        assert e.payload.offered >= len(e.payload.read)


@pytest.mark.parametrize(
    ("read", "offered", "said"),
    [
        (["a", "b"], 32, "read 2 of 32 snippets"),
        (["a"], 1, "read 1 snippet"),
        (["a", "b"], 2, "read 2 snippets"),
        ([], 5, "read 0 of 5 snippets"),
        (None, None, ""),
    ],
)
def test_the_step_line_says_how_many_snippets_a_call_read(read, offered, said):
    from ui.runs.step_lines import reading_text

    assert reading_text(AgentMessage(text="", read=read, offered=offered)) == said


@pytest.mark.parametrize("window", [2048, 128_000])
def test_discuss_reader_reads_exactly_what_the_decision_maker_accepted(window):
    llm = with_window(test_methods_discuss.scripted(), window)
    run = execute("discuss", MC, llm=llm, retriever=ListRetriever(long_hits(32, 900)))
    assert run.status == "ok", run.events[-1].payload
    decision, reader = (
        next(e.payload for e in run.events if e.agent == agent and e.kind == "agent_message")
        for agent in ("Decision-maker", "Reader")
    )
    assert decision.read == reader.read and decision.offered == reader.offered
    assert (len(reader.read) == reader.offered) == (window == 128_000)  # a small window reads only some
