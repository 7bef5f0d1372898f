"""Each agent decodes at the temperature its paper or the authors' code sets (docs/fidelity/): the MedRAG toolkit's
generate() is greedy (temperature 0.0) for CoT, MedRAG and every i-MedRAG call; MASS-RAG's paper sets none, so its
agents decode greedily too. SEMA-RAG's I/E 1.0 and A 0.0 are checked in test_methods_sema.py."""

from __future__ import annotations

from core.engine.runner import execute
from tests import test_methods_imedrag, test_methods_mass
from tests.fakes import ListRetriever, ScriptedLLM, make_hits

REPLY = {"reasoning": "r", "answer": "B", "cited_ids": []}


def temperatures(method: str, llm: ScriptedLLM, question) -> set[float]:
    run = execute(method, question, llm=llm, retriever=ListRetriever(make_hits(8)))
    assert run.status == "ok", run.events[-1].payload
    return {c["temperature"] for c in llm.calls}


def test_toolkit_methods_and_mass_decode_greedily():
    mc = test_methods_imedrag.MC
    assert temperatures("cot", ScriptedLLM().enqueue(REPLY), mc) == {0.0}
    assert temperatures("medrag", ScriptedLLM().enqueue(REPLY), mc) == {0.0}
    assert temperatures("imedrag", test_methods_imedrag.scripted(), mc) == {0.0}
    # an open question brings in the Answer Agents too
    assert temperatures("mass", test_methods_mass.scripted(), test_methods_mass.OPEN) == {0.0}
