"""The trace renderer draws every event kind: a run with all of them, and a run that failed half-way."""

from __future__ import annotations

from streamlit.testing.v1 import AppTest

from core.engine.runner import execute
from core.engine.trace import (
    AgentMessage,
    Answer,
    Error,
    Event,
    GeneratedDoc,
    Hit,
    Query,
    Report,
    Retrieval,
    Run,
    Sufficiency,
    Usage,
    Verdict,
    VerdictItem,
)
from tests.providers.fakes import ShortListServer
from tests.providers.matrix import QUESTION, client, retriever
from ui.runs.event_view import role_style


def _hits() -> list[Hit]:
    texts = [
        "Inferior ST elevation (II, III, aVF) usually means right coronary artery occlusion. " * 4,
        "Anterior ST elevation points to the left anterior descending artery.",
        "Old guidance: give oxygen to every patient with chest pain.",
    ]
    return [
        Hit(
            snippet_id=f"teach-{i}",
            corpus="teaching",
            title=f"Passage {i}",
            text=t,
            rank=i + 1,
            score=round(0.03 - i * 0.005, 4),
            scores={"bm25": 9.5 - i, "dense": 0.8 - i / 10},
            ranks={"bm25": i + 1, "dense": 3 - i},
        )
        for i, t in enumerate(texts)
    ]


def full_run() -> Run:
    run = Run(
        method="sema",
        question="Which artery is occluded in an inferior STEMI?",
        options={"A": "Left anterior descending", "B": "Right coronary", "C": "Left circumflex"},
        model="scripted",
    )
    llm_call = Usage(calls=1, prompt_tokens=300, completion_tokens=40, seconds=2.5)
    query = "inferior STEMI culprit artery"
    verdicts = [
        VerdictItem(doc_id="teach-0", keep=True, reason="on point"),
        VerdictItem(doc_id="teach-1", keep=False, reason="near miss: anterior"),
        VerdictItem(doc_id="gen-1", keep=True, reason="fills the gap"),
    ]
    payloads = [
        (
            "interpretation",
            "I-Agent",
            AgentMessage(
                role="interpreter",
                text="{}",
                data={
                    "intent": "localise the culprit artery",
                    "entities": ["inferior STEMI", "ECG leads II, III, aVF"],
                    "initial_query": query,
                },
            ),
            llm_call,
        ),
        ("exploration turn 1", "E-Agent", Query(text=query, purpose="initial", round=1), None),
        (
            "exploration turn 1",
            "E-Agent",
            Retrieval(query=query, hits=_hits(), round=1),
            Usage(retrievals=1, seconds=0.2),
        ),
        (
            "sufficiency round 1",
            "E-Agent",
            Sufficiency(
                round=1,
                sufficient=False,
                gaps=["coronary dominance"],
                follow_up_queries=["right dominant circulation"],
                new_hits=2,
            ),
            None,
        ),
        ("sufficiency round 2", "E-Agent", Sufficiency(round=2, sufficient=False, gaps=["dominance unclear"]), None),
        (
            "generation",
            "Generator",
            GeneratedDoc(doc_id="gen-1", text="Most people are right dominant.", gap="coronary dominance"),
            Usage(calls=1, prompt_tokens=200, completion_tokens=30, seconds=1.5),
        ),
        ("selection", "Integrator", Verdict(items=verdicts, accepted=True, reason="enough to answer"), None),
        (
            "claims",
            "A-Agent",
            AgentMessage(
                role="arbiter",
                text="{}",
                data={
                    "supporting": [{"claim": "II, III, aVF map to the RCA", "ids": ["teach-0", "gen-1"]}],
                    "refuting": [],
                    "deeper": [{"nested": {"kept": "as JSON"}}],
                },
                read=["teach-0", "gen-1"],
                offered=4,
            ),
            llm_call,
        ),
        (
            "arbitration",
            "A-Agent",
            Report(
                supporting=["II, III, aVF map to the RCA"],
                refuting=["LAD gives anterior changes"],
                conflicts=["oxygen advice is outdated"],
                summary="RCA best supported",
            ),
            None,
        ),
        (
            "final answer",
            "Answer",
            Answer(
                choice="B",
                text="Right coronary",
                rationale="Inferior leads map to the RCA.",
                cited=["teach-0", "gen-1"],
            ),
            None,
        ),
    ]
    for seq, (stage, agent, payload, usage) in enumerate(payloads):
        run.events.append(
            Event(run_id=run.id, seq=seq, stage=stage, agent=agent, payload=payload, usage=usage or Usage())
        )
    run.answer, run.status, run.finished = run.events[-1].payload, "ok", run.started + 4.5
    run.totals = run.compute_totals()
    return run


def render(run: Run, upto: int | None = None) -> AppTest:
    def script():
        import streamlit as st

        from ui.runs.trace_view import render_run

        render_run(st.session_state["run"], key="t", show_question=True, upto=st.session_state["upto"])

    at = AppTest.from_function(script, default_timeout=20)
    at.session_state["run"], at.session_state["upto"] = run, upto
    return at.run()


def _text(at: AppTest) -> str:
    return "\n".join(m.value for m in at.markdown)


def test_every_event_kind_is_drawn():
    at = render(full_run())
    assert not at.exception
    text = _text(at)
    # the answer card, with its cited documents as highlighted cards
    assert '<span class="letter">B</span>Right coronary' in text
    assert 'class="snip cited"' in text and "Passage 0" in text
    assert 'class="snip gen cited"' in text and "fills the gap: coronary dominance" in text
    # agent messages as a conversation; structured replies as fields, not raw JSON
    assert len(at.chat_message) == 2 and at.chat_message[0].avatar == ":material/psychology:"
    # a call that read snippets says how many of those it was given; one that read none says nothing
    assert "· turn" not in text and ":gray[arbiter · read 2 of 4 snippets · 300+40 tokens" in text
    assert text.count("read 2 of 4") == 1
    assert "inferior STEMI" in text and "localise the culprit artery" in text
    # a list of objects (the arbiter's claims) as one readable line each; deeper nesting as JSON
    claim = next(line for line in text.splitlines() if line.startswith("- :gray[claim] II, III, aVF map to the RCA"))
    assert ":gray[ids] " in claim and 'data-doc="teach-0"' in claim and 'data-doc="gen-1"' in claim  # linked ids
    assert "**refuting:**\n- (none)" in text
    assert len(at.json) == 1 and "as JSON" in at.json[0].value
    # query, retrieval with per-retriever scores, sufficiency timeline
    assert "inferior STEMI culprit artery" in text and "bm25 9.5 (#1)" in text
    assert "Round 1: not sufficient yet" in text and "right dominant circulation" in text
    assert "Round 2: not sufficient, no turn left" in text  # the last round: nothing more is fetched
    # verdict badges, the dropped snippet marked on its card too
    assert 'class="tag drop"' in text and "near miss: anterior" in text and 'class="snip dropped"' in text
    assert ":green-badge[accepted]" in text
    # the report in three columns
    assert ":green-badge[Supporting · 1]" in text and ":red-badge[Refuting · 1]" in text
    assert ":orange-badge[Conflicts · 1]" in text
    # retrieved and generated side by side
    assert "**Retrieved** · 3" in text and "**Generated** · 1" in text
    # cost: totals and the chart by stage
    metrics = {m.label: m.value for m in at.metric}
    assert metrics["LLM calls"] == "3" and metrics["Tokens"] == "910" and metrics["Retrievals"] == "1"
    assert len(at.get("plotly_chart")) == 1
    assert [t.label for t in at.tabs][0] == "Trace · 10 events"


def test_a_failed_run_shows_the_error_and_the_partial_trace():
    run = full_run()
    run.events = run.events[:3]
    error = Error(message="could not reach the LLM endpoint at http://x/v1", error_type="LLMError")
    run.events.append(Event(run_id=run.id, seq=3, stage="failed", agent="SEMA-RAG", payload=error))
    run.answer, run.status = None, "error"
    at = render(run)
    assert not at.exception
    text = _text(at)
    assert "The run failed:" in text and "could not reach the LLM endpoint" in text
    assert "The trace up to that point is below (4 events)" in "\n".join(c.value for c in at.caption)
    assert "retrieved **3** snippets" in text
    assert any("could not reach" in e.value for e in at.error)


def test_a_run_still_being_written_is_not_called_failed():
    run = full_run()
    run.events = run.events[:3]
    run.answer, run.status, run.finished = None, "running", None
    at = render(run)
    assert not at.exception
    text = _text(at)
    assert "**Not finished:**" in text and "failed" not in text
    assert "The trace so far is below (3 events)." in "\n".join(c.value for c in at.caption)


def test_a_list_written_short_is_said_on_the_agents_card():
    """A run against a server whose model writes one follow-up query where three are asked goes on, and the
    Questioner's card says so beside its reply."""
    with ShortListServer() as server:
        run = execute(
            "imedrag", QUESTION, {"rounds": 1, "queries": 3, "k": 3}, llm=client(server), retriever=retriever()
        )
    assert run.status == "ok"
    at = render(run)
    assert not at.exception
    (questioner,) = [c for c in at.chat_message if c.name == "Questioner"]
    notes = [c.value for c in questioner.caption]
    assert any("Asked for 3 queries, the model wrote 1]: the run went on with what it wrote." in n for n in notes)


def test_roles_get_their_own_avatar():
    assert role_style("expert", "Cardiologist")[0] == ":material/stethoscope:"
    assert role_style("summarizer", "Summarizer")[0] == ":material/summarize:"
    assert role_style("answerer (summarizer)", "Answer Agent")[0] == ":material/menu_book:"
    assert role_style("decision-maker", "Decision maker")[0] == ":material/fact_check:"
    assert role_style("something new", "Someone")[0] == ":material/chat:"


def test_a_stage_of_concurrent_calls_shows_its_wall_time():
    from ui.runs.trace_view import stage_cost

    views = [
        Event(
            run_id="r",
            seq=i,
            stage="views",
            agent=agent,
            time=100 + i / 2,
            payload=AgentMessage(role=agent.lower(), text="..."),
            usage=Usage(calls=1, prompt_tokens=100, completion_tokens=10, seconds=10),
        )
        for i, agent in enumerate(["Summarizer", "Extractor", "Reasoner"])
    ]
    assert stage_cost(views) == "300+30 tokens · 11.0 s wall (30.0 s of calls at once)"
    assert stage_cost(views[:1]) == "100+10 tokens · 10.0 s"
