"""Discuss-RAG control flow with a scripted model, as the authors' code runs it: the discussion reads the question
stem and writes up to turns + 1 summaries; the decision-maker makes one yes/no judgment over the k snippets from
the stem alone; accepted, the reader reads all k; rejected, CoT answers. Also: the per-snippet variant, the
ablation presets, the agents' temperatures, replay from the response cache, and failures ending in an error."""

from __future__ import annotations

import itertools
import sys

import pytest

from core.engine.llm.cache import ResponseCache
from core.engine.methods.discuss import READ_BY_BOTH
from core.engine.methods.knobs import sample_seed
from core.engine.question import Question
from core.engine.runner import execute
from core.studio.eval.presets import PRESETS
from core.studio.teaching import load_cases
from tests.fakes import ListRetriever, ScriptedLLM, make_hits, together

MC = Question(text="Which drug is first line for disease 1?", options={"A": "aspirin", "B": "metformin"})
OPEN = Question(text="What is the first-line drug for disease 1?")
EXPERTS = {
    "experts": [
        {"role": "Endocrinologist", "why": "glucose control"},
        {"role": "Pharmacologist", "why": "drug mechanisms"},
        {"role": "Endocrinologist", "why": "a second opinion"},
    ]
}
SUMMARY = "Knowing the mechanism of first-line drugs for disease 1 is key."  # the first summary
LATER_SUMMARIES = ["Doses of those drugs matter too.", "Contraindications of those drugs matter as well."]
DISTILLED = "First-line drugs for disease 1 and how they act."
ANSWER = {
    "reasoning": "The documents name it.",
    "answer": "B",
    "cited_ids": ["teaching-1", "teaching-7", "teaching-11"],
}  # teaching-11 is never retrieved


def verdict(keep: set[str], accept: bool):
    """The per-snippet variant's decision-maker, judging every snippet it was shown (their ids are in its prompt)."""

    def reply(messages):
        ids = [line[1:].split("]")[0] for line in messages[1]["content"].splitlines() if line.startswith("[teaching-")]
        return {
            "judgments": [
                {"doc_id": i, "reason": "on topic" if i in keep else "off topic", "keep": i in keep} for i in ids
            ],
            "accept": accept,
            "reason": "relevant" if accept else "misleading",
        }

    return reply


def scripted(
    keep: set[str] = frozenset({"teaching-1", "teaching-4"}),
    accept: bool = True,
    declines_in_turn: int | None = None,
    experts_together: int = 1,
    cache=None,
) -> ScriptedLLM:
    summaries = itertools.chain([SUMMARY], LATER_SUMMARIES, itertools.repeat("Nothing more to add."))

    def expert(messages):
        text = messages[1]["content"]
        if "(none yet)" in text:  # the first turn
            return {"insight": "Know the drug classes."}
        turn = 2 if SUMMARY in text else 3 if LATER_SUMMARIES[0] in text else 4
        done = declines_in_turn == turn
        return {"nothing_to_add": True} if done else {"nothing_to_add": False, "insight": f"Know more, turn {turn}."}

    return (
        ScriptedLLM(cache=cache)
        .on("You are the recruiter", EXPERTS)
        .on("You are the summarizer", lambda _: {"summary": next(summaries)})
        .on("You are the verifier", {"summary": DISTILLED})
        .on(
            "You are the decision-maker. Analyse",
            {"reasoning": "They cover it." if accept else "misleading", "answer": "yes" if accept else "no"},
        )
        .on("You are the decision-maker. For each document", verdict(set(keep), accept))
        .on("Do not answer the question or pick an option.", together(experts_together)(expert))
        .on("the ids of the documents you used", ANSWER)
        .on("commit to one answer", {"reasoning": "From memory.", "answer": "A"})
    )


def stages(run) -> list[str]:
    return [e.stage for e in run.events]


def prompts(llm, marker: str) -> list[str]:
    return [c["messages"][1]["content"] for c in llm.calls if marker in c["messages"][1]["content"]]


def test_accepted_snippets_are_all_read_by_the_reader():
    llm, retriever = scripted(), ListRetriever(make_hits(12))
    run = execute("discuss", MC, llm=llm, retriever=retriever)

    assert run.status == "ok" and run.answer.choice == "B"
    recruit = run.events[0]
    assert recruit.agent == "Recruiter" and [e["role"] for e in recruit.payload.data["experts"]][:2] == [
        "Endocrinologist",
        "Pharmacologist",
    ]
    # a repeated specialty stays a separate expert in the trace
    assert {e.agent for e in run.events if e.payload.kind == "agent_message" and e.payload.role == "expert"} == {
        "Endocrinologist",
        "Pharmacologist",
        "Endocrinologist 3",
    }
    query = next(e.payload for e in run.events if e.kind == "query")
    assert query.text == f"{MC.text}\n{DISTILLED}" and retriever.queries == [query.text]
    ids = [h.snippet_id for h in next(e.payload for e in run.events if e.kind == "retrieval").hits]
    assert len(ids) == 9

    # one yes/no judgment from the stem and the snippets: no options, no summary
    [decide] = prompts(llm, "You are the decision-maker")
    assert MC.text in decide and "Options:" not in decide and "metformin" not in decide
    assert DISTILLED not in decide and SUMMARY not in decide
    assert all(f"[{i}]" in decide for i in ids)
    [verdict_] = [e.payload for e in run.events if e.kind == "verdict"]
    assert verdict_.accepted is True and verdict_.reason == "They cover it."
    assert [(i.doc_id, i.keep, i.reason) for i in verdict_.items] == [(i, True, READ_BY_BOTH) for i in ids]

    # accepted: the reader reads all k snippets, and the options
    [reader] = prompts(llm, "the ids of the documents you used")
    assert all(f"[{i}]" in reader for i in ids) and MC.render() in reader
    assert run.answer.cited == ["teaching-1", "teaching-7"]  # any snippet it read, and only those
    assert "CoT fallback" not in stages(run)
    assert run.answer.note == "the decision-maker accepted the snippets: answered from all 9 it read"
    # recruiter, 3 experts x 3 turns, 3 summaries, verifier, decision-maker, reader
    assert (run.totals.calls, run.totals.retrievals) == (16, 1)


def test_every_discussion_agent_reads_the_stem_without_the_options():
    llm = scripted()
    execute("discuss", MC, llm=llm, retriever=ListRetriever(make_hits(12)))

    for marker in (
        "You are the recruiter",
        "Do not answer the question or pick an option.",
        "You are the summarizer",
        "You are the verifier",
    ):
        found = prompts(llm, marker)
        assert found and all(MC.text in p and "Options:" not in p and "aspirin" not in p for p in found), marker


def test_agents_sample_at_the_authors_temperatures_with_the_runs_seed():
    llm = scripted()
    execute("discuss", MC, {"seed": 7}, llm=llm, retriever=ListRetriever(make_hits(12)))

    def settings(marker: str) -> set[tuple[float, int | None]]:
        return {(c["temperature"], c["seed"]) for c in llm.calls if marker in c["messages"][1]["content"]}

    # no temperature in the authors' chat calls (the API default 1.0); 0.0 where they pass it
    for marker in (
        "You are the recruiter",
        "Do not answer the question",
        "You are the summarizer",
        "You are the decision-maker",
    ):
        assert settings(marker) == {(1.0, sample_seed(1.0, 7))}, marker  # the one seeding rule every method uses
    for marker in ("You are the verifier", "the ids of the documents you used"):
        assert settings(marker) == {(0.0, None)}, marker


def test_a_saved_run_replays_from_the_response_cache_and_another_seed_samples_anew(tmp_path):
    llm = scripted(cache=ResponseCache(tmp_path / "cache.sqlite"))
    first = execute("discuss", MC, llm=llm, retriever=ListRetriever(make_hits(12)))
    sent = len(llm.calls)
    at = next(i for i, (marker, _) in enumerate(llm.rules) if marker == "You are the summarizer")
    llm.rules[at] = ("You are the summarizer", lambda _: {"summary": "a different sample"})  # shows if asked
    again = execute("discuss", MC, llm=llm, retriever=ListRetriever(make_hits(12)))

    assert len(llm.calls) == sent == 16  # every reply, sampled ones included, came from the cache
    assert all(e.usage.cached for e in again.events if e.kind == "agent_message")
    assert [e.payload.text for e in again.events if e.kind == "agent_message"] == [
        e.payload.text for e in first.events if e.kind == "agent_message"
    ]

    other = execute("discuss", MC, {"seed": 1}, llm=llm, retriever=ListRetriever(make_hits(12)))
    assert other.status == "ok" and len(llm.calls) > sent
    assert any("a different sample" in (e.payload.text or "") for e in other.events if e.kind == "agent_message")


def test_rejected_snippets_fall_back_to_cot_and_say_so():
    llm = scripted(accept=False)
    run = execute("discuss", MC, llm=llm, retriever=ListRetriever(make_hits(12)))

    assert run.status == "ok" and run.answer.choice == "A"
    assert stages(run)[-2:] == ["CoT fallback", "final answer"]
    assert run.answer.note == "CoT fallback: the decision-maker rejected the snippets (misleading)"
    assert run.answer.cited == []
    verdict_ = next(e.payload for e in run.events if e.kind == "verdict")
    assert verdict_.accepted is False and not any(i.keep for i in verdict_.items) and len(verdict_.items) == 9
    assert not prompts(llm, "the ids of the documents you used")  # the reader never runs
    system, user = (m["content"] for m in llm.calls[-1]["messages"])
    assert "commit to one answer" in system and MC.render() in user and "[teaching-" not in user  # options, no snippet


@pytest.mark.parametrize("turns, summaries", [(0, 1), (1, 2), (2, 3), (3, 4)])
def test_the_discussion_writes_up_to_turns_plus_one_summaries(turns, summaries):
    llm = scripted()
    run = execute("discuss", MC, {"turns": turns}, llm=llm, retriever=ListRetriever(make_hits(12)))

    assert run.status == "ok"
    said = [e for e in run.events if e.kind == "agent_message"]
    assert [e.stage for e in said if e.agent == "Summarizer"] == [
        f"brainstorm turn {t}" for t in range(1, summaries + 1)
    ]
    # every expert speaks once a turn; nobody is asked again after the last summary
    assert sum(e.payload.role == "expert" for e in said) == 3 * summaries


def test_the_discussion_ends_when_no_expert_has_anything_to_add():
    llm = scripted(declines_in_turn=2)
    run = execute("discuss", MC, llm=llm, retriever=ListRetriever(make_hits(12)))

    summarizers = [e for e in run.events if e.agent == "Summarizer"]
    assert [e.stage for e in summarizers] == ["brainstorm turn 1"]
    assert sum(e.stage == "brainstorm turn 2" for e in run.events) == 3  # the three experts declining
    assert "brainstorm turn 3" not in stages(run) and run.status == "ok"
    [verifier] = prompts(llm, "You are the verifier")
    assert SUMMARY in verifier  # the last summary written is the one verified


def test_an_expert_with_nothing_to_add_writes_nothing_more():
    """The reference's expert answers a bare "no" when the summary is sufficient; the grammar allows exactly that,
    so a small model cannot go on to write an insight nobody reads (and the trace shows a decline as one)."""
    from pydantic import ValidationError

    from core.engine.llm.request import schema_format
    from core.engine.methods.discuss import Review

    schema = schema_format(Review)["json_schema"]["schema"]
    shapes = [schema["$defs"][alt["$ref"].rsplit("/", 1)[1]] for alt in schema["anyOf"]]
    assert sorted(sorted(shape["properties"]) for shape in shapes) == [
        ["insight", "nothing_to_add"],
        ["nothing_to_add"],
    ]
    assert Review.model_validate_json('{"nothing_to_add": true}').root.nothing_to_add is True
    with pytest.raises(ValidationError):
        Review.model_validate_json('{"nothing_to_add": false}')  # an addition says what it adds
    run = execute("discuss", MC, llm=scripted(declines_in_turn=2), retriever=ListRetriever(make_hits(12)))
    assert [e.payload.data for e in run.events if e.stage == "brainstorm turn 2"] == [{"nothing_to_add": True}] * 3


def test_experts_of_a_turn_speak_concurrently():
    llm = scripted(experts_together=3)  # an expert answers only once all three of its turn are speaking
    run = execute("discuss", MC, llm=llm, retriever=ListRetriever(make_hits(12)))

    assert run.status == "ok" and llm.max_active == 3
    for turn in (1, 2, 3):
        events = [e for e in run.events if e.stage == f"brainstorm turn {turn}"]
        assert sum(e.agent != "Summarizer" for e in events) == 3


def test_the_per_snippet_variant_reads_only_the_kept_snippets():
    llm = scripted()
    run = execute("discuss", MC, {"judge_each": True}, llm=llm, retriever=ListRetriever(make_hits(12)))

    assert run.status == "ok" and run.answer.choice == "B"
    verdict_ = next(e.payload for e in run.events if e.kind == "verdict")
    assert verdict_.accepted is True and {i.doc_id for i in verdict_.items if i.keep} == {"teaching-1", "teaching-4"}
    [reader] = prompts(llm, "the ids of the documents you used")
    assert "[teaching-1]" in reader and "[teaching-4]" in reader and "[teaching-2]" not in reader
    assert run.answer.cited == ["teaching-1"]  # teaching-7 was dropped, so it cannot be cited
    assert run.answer.note == "answered from the 2 of 9 snippets the decision-maker kept"

    keeps_none = execute(
        "discuss", MC, {"judge_each": True}, llm=scripted(keep=set()), retriever=ListRetriever(make_hits(12))
    )
    assert "CoT fallback" in stages(keeps_none) and "kept no snippet" in keeps_none.answer.note


def test_the_ablation_presets_drop_the_stage_they_name():
    no_talk = execute(
        "discuss", OPEN, PRESETS["discuss-no-brainstorm"].params, llm=scripted(), retriever=ListRetriever(make_hits(12))
    )
    assert no_talk.status == "ok" and no_talk.answer.text == "B"
    assert not any(
        e.agent in ("Recruiter", "Summarizer", "Verifier") or e.stage.startswith("brainstorm") for e in no_talk.events
    )
    assert next(e.payload for e in no_talk.events if e.kind == "query").text == OPEN.text
    assert next(e.payload for e in no_talk.events if e.kind == "verdict").accepted is True  # verification stays

    llm = scripted()
    no_check = execute(
        "discuss", MC, {**PRESETS["discuss-no-verify"].params, "k": 4}, llm=llm, retriever=ListRetriever(make_hits(12))
    )
    assert no_check.status == "ok" and not any(e.kind == "verdict" for e in no_check.events)
    assert not prompts(llm, "You are the decision-maker") and prompts(llm, "You are the summarizer")
    assert no_check.answer.note == "verification off: answered from all 4 snippets"
    assert no_check.answer.cited == ["teaching-1", "teaching-7"]


def test_no_snippets_means_rejection():
    run = execute("discuss", MC, {"brainstorm": False}, llm=scripted(), retriever=ListRetriever([]))

    assert run.status == "ok" and "retrieval returned no snippets" in run.answer.note


def test_a_reply_that_never_parses_ends_in_an_error_event_with_the_trace_kept():
    llm = scripted().on("You are the decision-maker", "keep them all")  # rules are tried in order: the first wins
    llm.rules.insert(0, llm.rules.pop())
    run = execute("discuss", MC, llm=llm, retriever=ListRetriever(make_hits(12)))

    assert run.status == "error" and run.answer is None
    assert len(prompts(llm, "You are the decision-maker")) == 2  # one try and one repair, not retried on and on
    assert run.events[-1].kind == "error" and "could not be parsed" in run.events[-1].payload.message
    assert [e.kind for e in run.events].count("retrieval") == 1  # everything before the failure is kept


def render(run, monkeypatch):
    """The run drawn by the trace screen, as markdown. Streamlit's script runner leaves its script as ``__main__``,
    which a later test's spawned processes would then try to import: the real one is put back afterwards."""
    from streamlit.testing.v1 import AppTest

    monkeypatch.setitem(sys.modules, "__main__", sys.modules["__main__"])

    def script():
        import streamlit as st

        from ui.runs.trace_view import render_run

        render_run(st.session_state["run"], key="t", show_question=True)

    at = AppTest.from_function(script, default_timeout=20)
    at.session_state["run"] = run
    at.run()
    assert not at.exception
    return "\n".join(m.value for m in at.markdown)


@pytest.mark.parametrize("accept", [True, False])
def test_the_trace_screen_shows_the_one_judgment_and_what_was_read(accept, monkeypatch):
    run = execute("discuss", MC, llm=scripted(accept=accept), retriever=ListRetriever(make_hits(12)))
    text = render(run, monkeypatch)

    verdict_line = ":material/fact_check: **Decision\\-maker** verdict "
    if accept:  # every snippet tagged read (no judgment of its own), none dropped
        assert verdict_line + ":green-badge[accepted] They cover it\\." in text
        read_tag = f'<span class="tag neutral" title="{READ_BY_BOTH}">read</span>'
        assert text.count(read_tag) >= 9 and 'class="tag drop"' not in text
    else:
        assert verdict_line + ":red-badge[rejected] misleading" in text
        assert '<span class="tag drop" title="the decision-maker rejected the snippets as a whole">dropped' in text


@pytest.mark.model
def test_smoke_on_the_embedded_model(embedded_llm, least_lengths):
    # the teaching pack's own index, as the other methods' smoke tests read: it runs while the HPO index builds
    from core.engine.retrieval import open_retriever
    from core.engine.retrieval.default_corpus import teaching_pack_dir

    case = next(c for c in load_cases() if c.id == "paracetamol")
    # The smallest knobs that still run every agent: one expert, one review round, two snippets and the least
    # reading; the reader (or the CoT fallback) writes the answer alone, as its reasoning is what costs time on
    # two cores (tests/test_answer_format.py parses each format on the real model).
    run = execute(
        "discuss",
        case.to_question(),
        {"n_experts": 1, "turns": 1, "k": 2, "max_doc_chars": 500, "answer_format": "answer only"},
        llm=embedded_llm,
        retriever=open_retriever([teaching_pack_dir()]),
    )

    assert run.status == "ok", run.events[-1].payload
    assert run.answer.choice in case.options
    assert run.events[0].agent == "Recruiter" and len(run.events[0].payload.data["experts"]) == 1
    reviews = [e.payload.data for e in run.events if e.stage == "brainstorm turn 2" and e.agent != "Summarizer"]
    assert len(reviews) == 1  # the expert declines with nothing more, or says what it adds
    assert all(r == {"nothing_to_add": True} or (r["nothing_to_add"] is False and r["insight"]) for r in reviews)
    summaries = ["brainstorm turn 1"] + (["brainstorm turn 2"] if any(r.get("insight") for r in reviews) else [])
    assert [e.stage for e in run.events if e.agent == "Summarizer"] == summaries
    assert next(e.payload for e in run.events if e.kind == "query").text.startswith(case.question)
    decision = next(e for e in run.events if e.agent == "Decision-maker" and e.kind == "agent_message")
    assert decision.payload.data["answer"] in ("yes", "no")
    verdict_ = next(e.payload for e in run.events if e.kind == "verdict")
    assert len(verdict_.items) == 2 and verdict_.accepted == (decision.payload.data["answer"] == "yes")
    assert run.answer.note.startswith("CoT fallback") == (not verdict_.accepted)
    assert set(run.answer.cited) <= {i.doc_id for i in verdict_.items if i.keep}
