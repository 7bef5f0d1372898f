"""More than a thousand generated malformed replies through the real client and through a multi-agent method
(MASS-RAG: three views at once, then a synthesis), served over HTTP by a local fake endpoint: nothing crashes,
every run ends with an answer or an error event, and its trace is kept in the store."""

from __future__ import annotations

import itertools
import json
import random
import threading
from collections import Counter

from pydantic import BaseModel

from core.engine.llm import LLM, Endpoint, LLMError
from core.engine.llm.cache import ResponseCache
from core.engine.question import Question
from core.engine.runner import execute
from core.engine.store import RunStore
from tests.fake_endpoint import FakeEndpoint, streams
from tests.fakes import ListRetriever, make_hits
from tests.fuzz_replies import malformed

CLIENT_REPLIES = 1000
METHOD_RUNS = 120


class Pick(BaseModel):
    reasoning: str
    answer: str


def test_malformed_replies_through_the_client(tmp_path):
    rng, served, lock = random.Random(20251123), Counter(), threading.Lock()

    def script(_request):
        category, step = malformed(rng, {"reasoning": "r", "answer": "B"})
        with lock:
            served[category] += 1
        return step

    server = FakeEndpoint(script=script)
    llm = LLM(
        Endpoint(base_url=server.url, model="fake", timeout=10, max_retries=0),
        cache=ResponseCache(tmp_path / "cache.sqlite"),
    )  # accepted replies go through the cache too
    outcomes, crashes = Counter(), []
    try:
        for i in itertools.count():
            if sum(served.values()) >= CLIENT_REPLIES:
                break
            try:
                llm.complete([{"role": "user", "content": f"pick one ({i})"}], schema=Pick, max_tokens=64)
                outcomes["parsed"] += 1
            except LLMError as exc:
                outcomes[type(exc).__name__] += 1
            except Exception as exc:  # noqa: BLE001 - a crash is what this test counts
                crashes.append(f"{type(exc).__name__}: {exc}")
    finally:
        server.close()
    print(
        f"\nclient: {sum(served.values())} malformed replies ({dict(served)}) in {sum(outcomes.values())} calls: "
        f"{dict(outcomes)}; crashes: {len(crashes)}"
    )
    assert sum(served.values()) >= CLIENT_REPLIES and not crashes, crashes[:5]


GOOD = {
    "You are the Summarizer.": {"summary": "Disease 1 has a first-line drug.", "doc_ids": ["teaching-1"]},
    "You are the Extractor.": {"spans": [{"doc_id": "teaching-1", "text": "fact number 1 about disease 1"}]},
    "You are the Reasoner.": {"inference": "Combining documents, B fits.", "doc_ids": ["teaching-3"]},
    "You are the Synthesis Agent.": {
        "reasoning": "The views agree.",
        "answer": "B",
        "cited_ids": ["teaching-1"],
        "followed_view": "Reasoner",
    },
}
MC = Question(text="Which drug is first line for disease 1?", options={"A": "aspirin", "B": "metformin"})


def test_malformed_replies_through_a_multi_agent_method(tmp_path):
    rng, served, lock = random.Random(7), Counter(), threading.Lock()

    def script(request):
        prompt = json.dumps(request["messages"])
        good = next((reply for role, reply in GOOD.items() if role in prompt), {"answer": "B"})
        with lock:
            if rng.random() < 0.55:  # often enough that some runs reach an answer
                served["valid"] += 1
                return streams(json.dumps(good))
            category, step = malformed(rng, good)
            served[category] += 1
            return step

    server = FakeEndpoint(script=script)
    llm = LLM(Endpoint(base_url=server.url, model="fake", timeout=10, max_retries=0), cache_mode="off")
    store, retriever = RunStore(tmp_path / "studio.sqlite"), ListRetriever(make_hits(5))
    endings, crashes, lost = Counter(), [], []
    try:
        for _ in range(METHOD_RUNS):
            try:
                run = execute("mass", MC, llm=llm, retriever=retriever, store=store)
            except Exception as exc:  # noqa: BLE001 - a crash is what this test counts
                crashes.append(f"{type(exc).__name__}: {exc}")
                continue
            endings[(run.status, run.events[-1].kind)] += 1
            if store.load_run(run.id) != run:
                lost.append(run.id)
    finally:
        server.close()
    malformed_count = sum(n for c, n in served.items() if c != "valid")
    print(
        f"\nMASS-RAG: {METHOD_RUNS} runs, {sum(served.values())} replies of which {malformed_count} malformed "
        f"({dict(served)}); endings {dict(endings)}; crashes: {len(crashes)}; traces not kept: {len(lost)}"
    )
    assert not crashes and not lost, (crashes[:5], lost[:5])
    assert set(endings) <= {("ok", "answer"), ("error", "error")}
    assert endings[("ok", "answer")] and endings[("error", "error")]  # both endings were exercised
