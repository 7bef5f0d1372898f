"""The final reader's reply format, a knob of every method: reasoning first (the papers'), answer first, or the
answer alone. The grammar-constrained reply follows the schema's field order, so the order is the schema's."""

from __future__ import annotations

import pytest

from core.methods import registry
from core.methods.base import answer_schema, reply_format
from core.question import Question
from core.runner import execute
from core.teaching import load_cases
from tests.fakes import ListRetriever, ScriptedLLM, make_hits

MC = Question(text="Which drug is first line for disease 1?", options={"A": "aspirin", "B": "metformin"})
FORMATS = ("reasoning first", "answer first", "answer only")


@pytest.mark.parametrize("order", FORMATS)
def test_the_schema_asks_for_the_fields_in_the_order_named(order):
    schema = answer_schema(MC, cite=True, order=order)
    names = list(schema.model_json_schema()["properties"])
    assert names == {"reasoning first": ["reasoning", "answer", "cited_ids"],
                     "answer first": ["answer", "reasoning", "cited_ids"],
                     "answer only": ["answer", "cited_ids"]}[order]
    assert reply_format(schema) == order


def test_every_method_has_the_knob_at_the_papers_default():
    for spec in registry().values():
        assert spec.params().answer_format == "reasoning first", spec.name


@pytest.mark.parametrize("order", FORMATS)
def test_the_answer_event_says_which_format_answered(order):
    llm = ScriptedLLM().enqueue({"answer": "B", "reasoning": "metformin is first line", "cited_ids": ["teaching-0"]})
    run = execute("medrag", MC, {"answer_format": order}, llm=llm, retriever=ListRetriever(make_hits(3)))
    assert run.status == "ok" and run.answer.choice == "B" and run.answer.answer_format == order
    assert run.answer.rationale == ("" if order == "answer only" else "metformin is first line")
    schema = llm.calls[-1]["schema"]
    assert reply_format(schema) == order


@pytest.mark.model
def test_each_format_parses_on_the_embedded_model(embedded_llm):
    case = next(c for c in load_cases() if c.id == "stemi")
    for order in ("answer first", "answer only"):
        run = execute("cot", case.to_question(), {"answer_format": order}, llm=embedded_llm)
        assert run.status == "ok", run.events[-1].payload
        assert run.answer.choice in case.options and run.answer.answer_format == order
        assert (run.answer.rationale == "") == (order == "answer only")
