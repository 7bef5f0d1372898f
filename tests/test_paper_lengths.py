"""Reply lengths follow the backend's profile: on the embedded model's profile the compact lengths a 1.5B model needs;
on every endpoint, a llama.cpp server of the same family included, each method's paper's or reference code's lengths
(docs/fidelity/ has the sources), with no length bound in any schema; a knob that is set applies on both."""

from __future__ import annotations

import json
from typing import Any

import pytest

from core.engine.methods import registry
from core.engine.methods.answer import DEFINITE_ANSWER, OWN_KNOWLEDGE, PAPER_REPLY_TOKENS, RAG_TEMPLATE
from core.engine.question import Question
from core.engine.runner import execute
from core.engine.trace import Hit
from tests.fakes import ListRetriever
from tests.test_compact_requests import MC, SchemaReplies, hits

METHODS = list(registry())


def run(
    method: str,
    provider: str,
    knobs: dict[str, Any] | None = None,
    choose: dict[str, Any] | None = None,
    question: Question = MC,
    snippets: list[Hit] | None = None,
) -> list[dict[str, Any]]:
    """The method's requests on a scripted server of the named profile (llama.cpp's own grammar dialect either way)."""
    llm = SchemaReplies(choose or {}, provider=provider)
    outcome = execute(
        method,
        question,
        {"rounds": 1, **(knobs or {})} if method == "imedrag" else knobs or {},
        llm=llm,
        retriever=ListRetriever(snippets or hits()),
    )
    assert outcome.status == "ok", outcome.events[-1].payload
    return llm.calls


def sent(calls: list[dict[str, Any]]) -> str:
    return json.dumps([{"messages": c["messages"], **c["params"]} for c in calls])


def prompts(calls: list[dict[str, Any]], marker: str) -> list[dict[str, Any]]:
    return [c for c in calls if marker in "\n".join(m["content"] for m in c["messages"])]


def schema(call: dict[str, Any]) -> dict[str, Any]:
    return call["params"]["response_format"]["json_schema"]["schema"]


@pytest.mark.parametrize("method", METHODS)
def test_the_profile_chooses_the_lengths_not_the_server(method):
    compact, paper = run(method, "embedded"), run(method, "llamacpp")
    assert "maxLength" in sent(compact) and "at most three sentences" in sent(compact)
    assert "maxLength" not in sent(paper)
    assert paper[-1]["max_tokens"] > compact[-1]["max_tokens"]  # the final reader's budget


@pytest.mark.parametrize("method", METHODS)
def test_a_budget_set_by_its_knob_applies_on_every_backend(method):
    knob = {"mass": {"max_tokens": 200, "answer_agent": True}}.get(method, {"max_tokens": 200})
    final = {
        "cot": "Think step by step",
        "imedrag": "Think step by step",
        "sema": "Based on the evidence report",
        "mass": "You are the Synthesis Agent",
    }.get(method, "the ids of the documents you used")
    for provider in ("embedded", "llamacpp"):
        calls = prompts(run(method, provider, knob), final)
        assert calls and all(c["max_tokens"] == 200 for c in calls), (method, provider)


def test_cot_and_medrag_reason_step_by_step_as_the_toolkit_with_its_definite_answer():
    (cot,) = run("cot", "llamacpp")
    assert cot["max_tokens"] == PAPER_REPLY_TOKENS
    assert "Think step by step, then give the answer." in cot["messages"][1]["content"]
    assert schema(cot)["properties"]["reasoning"] == {
        "description": "step by step",
        "title": "Reasoning",
        "type": "string",
    }
    (medrag,) = run("medrag", "llamacpp")
    assert DEFINITE_ANSWER in medrag["messages"][0]["content"] and OWN_KNOWLEDGE not in sent([medrag])
    (compact,) = run("medrag", "embedded")
    assert OWN_KNOWLEDGE in compact["messages"][0]["content"] and DEFINITE_ANSWER not in sent([compact])


def test_discuss_agents_write_the_authors_sentences_and_its_reader_has_their_line():
    calls = run("discuss", "llamacpp", choose={"nothing_to_add": False}, knobs={"turns": 1})
    assert prompts(calls, "in at most seven sentences, name the domains")  # agent_reason_discuss: "within 7"
    assert prompts(calls, "complementary knowledge in at most five sentences")  # whether_agent_continue: "within 5"
    assert prompts(calls, "summary of at most five sentences")  # summary_agent_chat: "within 5"
    (decision,) = prompts(calls, "You are the decision-maker")
    assert "reason step by step, then answer" in decision["messages"][1]["content"]
    (reader,) = prompts(calls, "the ids of the documents you used")
    assert DEFINITE_ANSWER in reader["messages"][1]["content"] and OWN_KNOWLEDGE not in sent([reader])
    assert {c["max_tokens"] for c in calls} == {PAPER_REPLY_TOKENS}


def test_medrgag_explorer_reasons_first_and_candidates_are_read_whole():
    long = [h.model_copy(update={"text": (h.text * 4).strip()}) for h in hits()]  # 3,600 characters each
    calls = run("medrgag", "llamacpp", snippets=long)
    (explorer,) = prompts(calls, "Identify the most important knowledge")
    assert list(schema(explorer)["properties"]) == ["reasoning", "missing"]  # "- Reasoning:" then the points
    (summarizer, *_) = prompts(calls, "Retrieved document:")
    assert long[0].text in summarizer["messages"][1]["content"]
    (reader,) = prompts(calls, "the ids of the documents you used")
    assert reader["max_tokens"] == 512 and RAG_TEMPLATE in sent([reader])  # vllm_answer; rag_template
    assert DEFINITE_ANSWER in RAG_TEMPLATE and OWN_KNOWLEDGE not in sent([reader])
    compact = run("medrgag", "embedded", snippets=long)
    (explorer,) = prompts(compact, "Identify the most important knowledge")
    assert list(schema(explorer)["properties"]) == ["missing"]
    (summarizer, *_) = prompts(compact, "Retrieved document:")
    assert long[0].text not in summarizer["messages"][1]["content"] and long[0].text[:1500] in sent([summarizer])


def test_mass_extractor_copies_as_many_spans_as_it_finds_unless_the_knob_says():
    (extractor,) = prompts(run("mass", "llamacpp"), "You are the Extractor")
    assert "Copy, word for word, the short spans" in extractor["messages"][1]["content"]
    assert "maxItems" not in json.dumps(schema(extractor))
    (capped,) = prompts(run("mass", "llamacpp", {"n_spans": 2}), "You are the Extractor")
    assert (
        "up to 2 short spans" in capped["messages"][1]["content"]
        and schema(capped)["properties"]["spans"]["maxItems"] == 2
    )


def test_sema_lists_are_bounded_only_by_the_papers_m():
    calls = run("sema", "llamacpp", choose={"sufficient": False})
    interpreter, explorer = prompts(calls, "You are the I-Agent")[0], prompts(calls, "You are the E-Agent")[0]
    assert "maxItems" not in json.dumps(schema(interpreter))
    follow_ups = schema(explorer)["$defs"]["Insufficient"]["properties"]["follow_up_queries"]
    assert (follow_ups["minItems"], follow_ups["maxItems"]) == (3, 3)
