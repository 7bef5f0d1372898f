"""The oracle benchmark's control flow: the oracle arm reads exactly the case's key passages, results are saved run
by run and not run again, and the report gives intervals and paired tests."""

from __future__ import annotations

import json

from benchmarks import oracle_bench
from core.studio.teaching import load_cases
from tests.fakes import ListRetriever, ScriptedLLM, make_hits


def test_oracle_reads_the_key_passages_and_the_bench_resumes(tmp_path):
    cases = load_cases()[:3]
    right = {c.id: c.answer for c in cases}

    def reader(messages):
        prompt = messages[1]["content"]
        case = next(c for c in cases if " ".join(c.question.split())[:60] in " ".join(prompt.split()))
        evidence = all(f"[{pid}]" in prompt for pid in case.key_passages)
        wrong = next(letter for letter in case.options if letter != case.answer)
        return {"reasoning": "r", "answer": right[case.id] if evidence else wrong, "cited_ids": []}

    llm = ScriptedLLM().on("Question:", reader)
    path = tmp_path / "oracle.json"
    oracle_bench.run_arms(cases, ["medrag", "oracle"], path, llm=llm, retriever=ListRetriever(make_hits(40)))

    saved = json.loads(path.read_text())
    assert {arm: [saved[c.id][arm]["correct"] for c in cases] for arm in ("medrag", "oracle")} == {
        "medrag": [False] * 3,
        "oracle": [True] * 3,
    }
    oracle_prompts = [c for c in llm.calls if "[tp-" in c["messages"][1]["content"]]
    assert len(oracle_prompts) == 3

    calls = len(llm.calls)
    oracle_bench.run_arms(cases, ["medrag", "oracle"], path, llm=llm, retriever=ListRetriever(make_hits(40)))
    assert len(llm.calls) == calls  # everything finished is kept, nothing runs twice

    table = oracle_bench.report(cases, ["medrag", "oracle"], saved)
    assert "| oracle | 3 | 3 | 1.00 | 0.44–1.00 |" in table
    assert "| medrag vs oracle | 3 | 0 | 3 | 0.250 |" in table
