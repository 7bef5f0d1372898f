"""The trace view on a real SEMA-RAG run (recorded on the embedded model, asthma case): teaching marks, the run's
tally, budget cuts apart from verdicts, the report once, citations once, the letter/reasoning flag, a cut run."""

from __future__ import annotations

from pathlib import Path

from streamlit.testing.v1 import AppTest

from core.engine.trace import Run
from tests.ui.runs.test_ui_trace_view import render
from ui.runs.trace_view import run_upto

DATA = Path(__file__).resolve().parents[2] / "data"


def sema() -> Run:
    return Run.model_validate_json((DATA / "sema_asthma_run.json").read_text())


def text_of(at: AppTest) -> str:
    return "\n".join(m.value for m in at.markdown)


def test_teaching_marks_tally_budget_cuts_and_the_report_once():
    at = render(sema())
    assert not at.exception
    text = text_of(at).replace("\\", "")
    assert "met 4 of 4 key passages, cited 2 of them, met the outdated one, met 2 near-miss ones" in text
    assert '<span class="tag teach outdated"' in text and '<span class="tag teach key"' in text
    assert "Since revised:</b> GINA stopped recommending" in text  # the outdated passage's note says what changed
    assert text.count("not read: over the reading budget") >= 14 and 'class="tag drop"' not in text
    assert 'class="snip budget' in text or "snip budget" in text
    assert [c.value for c in at.caption].count("Wrote the report drawn below.") == 1
    assert text.count(":green-badge[Supporting · 2]") == 1
    reveal = [e.label for e in at.expander if e.label.startswith("Teaching pack answer")]
    assert reveal == ["Teaching pack answer and note: open to reveal"]


def test_citations_once_and_a_letter_its_reasoning_argues_against_is_flagged():
    run = sema()
    answer = run.answer.model_copy(
        update={
            "choice": "A",
            "text": run.options["A"],
            "cited": ["tp-asthma-k1", "tp-asthma-k4", "tp-asthma-k1", "tp-asthma-k4"],
        }
    )
    run.events[-1] = run.events[-1].model_copy(update={"payload": answer})
    run.answer = answer
    at = render(run)
    assert not at.exception
    assert "**Cited** · 2" in text_of(at)
    assert at.warning[0].value.startswith("The answer is A, but its reasoning argues for D")


def test_a_run_cut_after_n_events_reads_as_still_running():
    run = sema()
    cut = run_upto(run, 5)
    assert len(cut.events) == 5 and cut.status == "running" and cut.answer is None
    assert cut.totals.calls == 2 and cut.totals.seconds < run.totals.seconds
    at = render(run, upto=5)
    assert not at.exception
    assert "**Not finished:**" in text_of(at) and at.tabs[0].label == "Trace · 5 events"
    assert run_upto(run, None) is run and run_upto(run, 99) is run


def test_a_benchmark_question_that_retrieves_teaching_passages_gets_no_teaching_marks_or_tally():
    """Marks belong to a case's own question: the same hits under a MedQA question carry none."""
    run = sema().model_copy(
        update={
            "question": "A 23-year-old woman at 6 weeks' gestation asks about asthma "
            "inhalers in pregnancy. Which is safest?"
        }
    )
    assert any(h.snippet_id.startswith("tp-") for e in run.events if e.kind == "retrieval" for h in e.payload.hits)
    at = render(run)
    assert not at.exception
    text = text_of(at)
    assert 'class="tag teach' not in text and "Teaching case" not in text and "key passage" not in text
    assert not [e for e in at.expander if e.label.startswith("Teaching pack answer")]
