"""Prompt order for prefix reuse: agents of one method share the system prompt and the start of their prompt
(documents, question, history), and each agent's own instructions come after that shared part."""

from __future__ import annotations

import os

import pytest

from core.engine.llm.fan_out import prefix_to_copy
from core.engine.runner import execute
from tests import test_methods_discuss, test_methods_imedrag, test_methods_mass, test_methods_medrgag, test_methods_sema
from tests.fakes import ListRetriever, make_hits


def prompt(call) -> str:
    """What the server reads, in order: the system message, then the user message."""
    return "\n".join(m["content"] for m in call["messages"])


def calls_with(llm, text: str) -> list[str]:
    return [prompt(c) for c in llm.calls if text in prompt(c)]


def shared(a: str, b: str) -> str:
    """The common start of two prompts, up to the last paragraph both contain whole."""
    common = os.path.commonprefix([a, b])
    return common if a == b else common[: common.rfind("\n\n") + 2]


@pytest.mark.parametrize(
    "method, scripted",
    [
        ("mass", test_methods_mass.scripted),
        ("discuss", test_methods_discuss.scripted),
        ("sema", lambda: test_methods_sema.scripted(sufficient_at=2)),
        ("medrgag", test_methods_medrgag.scripted),
    ],
)
def test_every_agent_of_a_method_starts_from_one_system_prompt(method, scripted):
    llm = scripted()
    run = execute(method, test_methods_mass.MC, llm=llm, retriever=ListRetriever(make_hits(8)))
    assert run.status == "ok"
    systems = {c["messages"][0]["content"] for c in llm.calls}
    assert len(systems) == 1, systems


def test_mass_views_share_documents_and_question_and_differ_only_in_their_role():
    llm = test_methods_mass.scripted()
    execute("mass", test_methods_mass.MC, llm=llm, retriever=ListRetriever(make_hits(5)))
    views = [calls_with(llm, f"You are the {role}.")[0] for role in ("Summarizer", "Extractor", "Reasoner")]
    common = shared(shared(views[0], views[1]), views[2])
    question = test_methods_mass.MC.render()
    assert "fact number 0 about disease 0" in common and question in common
    for view, role in zip(views, ("Summarizer", "Extractor", "Reasoner")):
        assert view[len(common) :].lstrip().startswith(f"You are the {role}.")  # the role comes last


def test_discuss_experts_and_summarizer_share_question_and_summary_before_their_roles():
    llm = test_methods_discuss.scripted()
    execute("discuss", test_methods_discuss.MC, llm=llm, retriever=ListRetriever(make_hits(12)))
    expert_calls = [c for c in llm.calls if "Do not answer the question or pick an option." in prompt(c)]
    second_turn = [c for c in expert_calls if test_methods_discuss.SUMMARY in prompt(c)]
    summarizer = [p for p in calls_with(llm, "You are the summarizer") if test_methods_discuss.SUMMARY in p][0]
    assert len(second_turn) == 3
    texts = [prompt(c) for c in second_turn]
    common = shared(shared(texts[0], texts[1]), summarizer)
    # the question stem, as the authors' discussion reads it
    assert test_methods_discuss.MC.text in common and test_methods_discuss.SUMMARY in common
    # among themselves the experts differ only in their last paragraph, the role
    experts_common = shared(shared(texts[0], texts[1]), texts[2])
    for text in texts:
        assert text[len(experts_common) :].startswith("You are a") and "\n\n" not in text[len(experts_common) :]
    # so a turn's experts, started together, read that part once (core.engine.llm.fan_out copies it between slots)
    for turn in (expert_calls[:3], second_turn):
        assert prefix_to_copy([c["messages"] for c in turn])


def test_discuss_reader_continues_the_decision_makers_documents():
    llm = test_methods_discuss.scripted()
    execute("discuss", test_methods_discuss.MC, llm=llm, retriever=ListRetriever(make_hits(12)))
    decide = calls_with(llm, "You are the decision-maker")[0]
    reader = calls_with(llm, "the ids of the documents you used")[0]
    common = shared(decide, reader)
    assert "Documents:" in common and "[teaching-" in common  # the documents the two read alike
    assert reader.rstrip().endswith("possibly none)."), "the reader's instructions come after its documents"


def test_sema_arbiter_reads_the_evidence_the_last_explorer_turn_read():
    llm = test_methods_sema.scripted(sufficient_at=2)
    execute("sema", test_methods_sema.MC, llm=llm, retriever=ListRetriever(make_hits(8)))
    last_explore = calls_with(llm, "You are the E-Agent")[-1]
    arbiter = calls_with(llm, "You are the A-Agent. Weigh")[0]
    common = shared(last_explore, arbiter)
    assert test_methods_sema.MC.render() in common and "Clinical schema:" in common
    assert arbiter[len(common) :].lstrip().startswith("You are the A-Agent.")


def test_imedrag_final_answer_continues_the_history_the_last_round_read():
    llm = test_methods_imedrag.scripted()
    run = execute(
        "imedrag", test_methods_imedrag.MC, llm=llm, retriever=ListRetriever(make_hits(6)), params={"rounds": 2}
    )
    assert run.status == "ok"
    last_round = calls_with(llm, "write 3 concise")[-1]
    final = calls_with(llm, "ids of the documents that support it")[0]
    common = shared(last_round, final)
    assert "Query:" in common and "Answer:" in common  # the first round's query-answer pairs


def test_medrgag_agents_share_the_question_first():
    llm = test_methods_medrgag.scripted()
    execute("medrgag", test_methods_mass.MC, llm=llm, retriever=ListRetriever(make_hits(8)))
    question = test_methods_mass.MC.render()
    for text in ("Retrieved document:", "Identify the most important knowledge", "Select the most useful"):
        user = calls_with(llm, text)[0].split("\n", 2)[-1]
        assert user.index(question) < user.index(text.split(":")[0]), text
