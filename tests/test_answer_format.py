"""The final reader's reply format, a knob of every method: reasoning first (the papers'), answer first, or the
answer alone. The grammar-constrained reply follows the schema's field order, so the order is the schema's."""

from __future__ import annotations

import pytest

from core.engine.llm import LLM, Endpoint
from core.engine.llm.answer_formats import EMBEDDED_ANSWER_FORMAT
from core.engine.methods import registry
from core.engine.methods.answer import answer_schema, reply_format
from core.engine.question import Question
from core.engine.runner import execute, new_run
from core.studio.eval import EvalPlan
from core.studio.teaching import load_cases
from tests.fakes import ListRetriever, ScriptedLLM, make_hits

MC = Question(text="Which drug is first line for disease 1?", options={"A": "aspirin", "B": "metformin"})
FORMATS = ("reasoning first", "answer first", "answer only")


@pytest.mark.parametrize("order", FORMATS)
def test_the_schema_asks_for_the_fields_in_the_order_named(order):
    schema = answer_schema(MC, cite=True, order=order)
    names = list(schema.model_json_schema()["properties"])
    assert (
        names
        == {
            "reasoning first": ["reasoning", "answer", "cited_ids"],
            "answer first": ["answer", "reasoning", "cited_ids"],
            "answer only": ["answer", "cited_ids"],
        }[order]
    )
    assert reply_format(schema) == order


def test_every_method_has_the_knob_automatic_and_a_run_keeps_the_format_its_backend_stands_for():
    """Automatic is the backend's measured best: the embedded model's, or the papers' on an endpoint. The run's
    knobs hold the concrete format, so a what-if re-run or a replay repeats the order that answered."""
    embedded, endpoint = LLM(Endpoint()), ScriptedLLM()
    assert (embedded.answer_format, endpoint.answer_format) == (EMBEDDED_ANSWER_FORMAT, "reasoning first")
    for name, spec in registry().items():
        assert spec.params().answer_format is None, name
        assert new_run(name, MC, {}, llm=embedded, retriever=None).params["answer_format"] == EMBEDDED_ANSWER_FORMAT
        assert new_run(name, MC, {}, llm=endpoint, retriever=None).params["answer_format"] == "reasoning first"
        chosen = new_run(name, MC, {"answer_format": "answer only"}, llm=embedded, retriever=None)
        assert chosen.params["answer_format"] == "answer only"


def test_an_unresolved_format_is_refused_rather_than_read_as_answer_only():
    with pytest.raises(ValueError, match="automatic"):
        answer_schema(MC, order=None)


def test_eval_keys_hold_the_format_an_automatic_arm_stands_for():
    plan = EvalPlan(methods=["cot"], items=[])
    automatic = plan.config_keys("qwen", [], "answer first")["cot"]
    assert (
        automatic
        == EvalPlan(methods=["cot"], items=[], params={"cot": {"answer_format": "answer first"}}).config_keys(
            "qwen", [], "reasoning first"
        )["cot"]
    )
    assert automatic != plan.config_keys("qwen", [], "reasoning first")["cot"]


@pytest.mark.parametrize("order", FORMATS)
def test_the_answer_event_says_which_format_answered(order):
    llm = ScriptedLLM().enqueue({"answer": "B", "reasoning": "metformin is first line", "cited_ids": ["teaching-0"]})
    run = execute("medrag", MC, {"answer_format": order}, llm=llm, retriever=ListRetriever(make_hits(3)))
    assert run.status == "ok" and run.answer.choice == "B" and run.answer.answer_format == order
    assert run.answer.rationale == ("" if order == "answer only" else "metformin is first line")
    schema = llm.calls[-1]["schema"]
    assert reply_format(schema) == order


@pytest.mark.model
def test_each_format_parses_on_the_embedded_model(embedded_llm, least_lengths):
    case = next(c for c in load_cases() if c.id == "stemi")
    for order in ("answer first", "answer only"):
        run = execute("cot", case.to_question(), {"answer_format": order}, llm=embedded_llm)
        assert run.status == "ok", run.events[-1].payload
        assert run.answer.choice in case.options and run.answer.answer_format == order
        assert (run.answer.rationale == "") == (order == "answer only")
