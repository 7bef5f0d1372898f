"""On an endpoint every agent of every method is sent its paper's instructions: the words of the paper or the authors'
code it follows (``tests/data/paper_wording.json``, each quote with the repository and file it comes from), and no
length or brevity the paper does not ask for. "Be brief", and the short caps of the embedded model, belong to the
embedded model's lengths alone (docs/fidelity/README.md, "Reply lengths, by backend").

Each scenario runs one method through the runner, with the real client, against a scripted OpenAI-compatible
endpoint (``tests/fake_endpoint.py``) that answers every request with the smallest reply its schema takes; the
requests it received are what is checked."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from core.engine.llm import LLM, Endpoint
from core.engine.llm.ladder import Memory
from core.engine.question import Question
from core.engine.runner import execute
from tests.fake_endpoint import FakeEndpoint, Step
from tests.fakes import ListRetriever
from tests.test_compact_requests import MC, hits, instance

WORDING = json.loads((Path(__file__).parent / "data" / "paper_wording.json").read_text(encoding="utf-8"))["entries"]
# name: (method, knobs, fields the replies choose); every agent of every method speaks in at least one
SCENARIOS: dict[str, tuple[str, dict[str, Any], dict[str, Any]]] = {
    "cot": ("cot", {}, {}),
    "medrag": ("medrag", {}, {}),
    "imedrag": ("imedrag", {"rounds": 1}, {}),
    "discuss": ("discuss", {"turns": 1}, {"nothing_to_add": False}),
    "discuss rejected": ("discuss", {"turns": 0}, {"answer": "no"}),
    "sema": ("sema", {}, {"sufficient": False}),
    "sema without A-Agent": ("sema", {"use_a_agent": False}, {"sufficient": True}),
    "medrgag": ("medrgag", {}, {}),
    "mass": ("mass", {"answer_agent": True}, {}),
}
# A length a request names (a cap): each must be one the paper asks for, so one a quote's agent is cited for.
CAP = re.compile(r"at most \w+ (?:sentences|words|characters|items)")
BREVITY = ("be brief", "briefly")


def requests(name: str, question: Question = MC) -> list[dict[str, Any]]:
    """What the endpoint received while the scenario's run went through."""
    method, knobs, choose = SCENARIOS[name]

    def reply(request: dict[str, Any]) -> Step:
        fmt = request.get("response_format")
        if not fmt:
            return Step(text="A fact [textbooks-0].")
        schema = fmt["json_schema"]["schema"]
        return Step(text=json.dumps(instance(schema, schema.get("$defs", {}), choose)))

    server = FakeEndpoint(script=reply)
    try:
        endpoint = Endpoint(base_url=server.url, model="qwen2.5-7b-instruct", provider="llamacpp", max_retries=0)
        llm = LLM(endpoint, cache_mode="off", memory=Memory())
        run = execute(method, question, knobs, llm=llm, retriever=ListRetriever(hits()))
        assert run.status == "ok", run.events[-1].payload
        return server.requests
    finally:
        server.close()


def said(request: dict[str, Any]) -> str:
    """Everything a request tells the model: its messages and its reply schema (whose descriptions it reads too)."""
    return "\n".join(m["content"] for m in request["messages"]) + "\n" + json.dumps(request.get("response_format"))


@pytest.fixture(scope="module")
def sent() -> dict[str, list[str]]:
    return {name: [said(r) for r in requests(name)] for name in SCENARIOS}


def entries(scenario: str) -> list[dict[str, Any]]:
    return [e for e in WORDING if e["scenario"] == scenario]


def test_every_quote_names_its_source_and_every_scenario_is_quoted():
    assert {e["scenario"] for e in WORDING} == set(SCENARIOS)
    for entry in WORDING:
        source = entry["source"]
        assert (source["repo"] and source["path"].startswith("src/")) or source.get("paper", "").startswith("arXiv")
        assert entry["paper"] and entry["ours"] and entry["marker"]


@pytest.mark.parametrize("scenario", list(SCENARIOS))
def test_every_agent_is_sent_the_words_its_paper_has(sent, scenario):
    for entry in entries(scenario):
        mine = [text for text in sent[scenario] if entry["marker"] in text]
        assert mine, f"{scenario}: no request of the {entry['agent']} ({entry['marker']!r})"
        for text in mine:
            for words in entry["ours"]:
                assert words in text, f"{scenario}, {entry['agent']}: {words!r} (after {entry['source']})"


@pytest.mark.parametrize("scenario", list(SCENARIOS))
def test_every_request_belongs_to_a_quoted_agent_and_holds_no_length_its_paper_lacks(sent, scenario):
    for text in sent[scenario]:
        agents = [e for e in entries(scenario) if e["marker"] in text]
        assert agents, f"{scenario}: a request of no quoted agent: {text[-300:]!r}"
        assert not [w for w in BREVITY if w in text], f"{scenario}, {agents[0]['agent']}: told to be brief"
        cited = " ".join(words for e in agents for words in e["ours"])
        for cap in CAP.findall(text):
            assert cap in cited, f"{scenario}, {agents[0]['agent']}: {cap!r}, which its paper does not ask for"


def test_a_discuss_expert_s_reasoning_is_passed_on_with_its_addition():
    """The authors' summarizer reads an expert's whole "yes - ... Reasoning: ..." reply (src/discuss_rag.py,
    ``Pre_dis.process_info_query``)."""
    summaries = [r for r in requests("discuss") if "You are the summarizer" in said(r)]
    assert len(summaries) == 2
    assert "Reasoning: " not in said(summaries[0]) and "noted\nReasoning: noted" in said(summaries[1])
