"""A recorded run's trace as a clinician checks it (the workshop pack's STEMI case): ids anywhere in the trace are
links to the snippet cards, by the number the cards carry; a text cut by its reply format says so; a line the model
repeated is drawn once with its count; a quote that failed the span check shows the words that failed; a document
the span check verified is not shown as rejected."""

from __future__ import annotations

import re

import pytest

from core.engine.trace import Event, Run, Verdict, VerdictItem
from core.studio.workshop.pack import PACK_DIR, load_pack
from tests.ui.runs.test_ui_trace_view import render
from ui.runs.snippet_cards import Evidence


@pytest.fixture(scope="module")
def stemi() -> dict[str, Run]:
    case = next(c for c in load_pack(PACK_DIR)[0] if c.case.id == "stemi")
    return {method: entry.run for method, entry in case.runs.items()}


def text(run: Run) -> str:
    at = render(run)
    assert not at.exception
    return "\n".join(m.value for m in at.markdown) + "\n" + "\n".join(c.value for c in at.caption)


def chip(doc_id: str, number: str) -> str:
    return f'data-doc="{doc_id}" title="[^"]*"><span class="idnum">{re.escape(number)}</span>'


def test_the_arbiters_columns_link_their_ids_to_the_numbered_cards(stemi):
    run = stemi["sema"]
    shown = text(run)
    ranks = Evidence.of(run.events).hits
    supporting = next(line for line in shown.splitlines() if line.startswith("- The ECG shows 3 mm"))
    for doc_id in ("tp-stemi-k1", "tp-stemi-n2"):  # "[tp-stemi-k1, tp-stemi-n2]" in the A-Agent's column
        assert re.search(chip(doc_id, f"#{ranks[doc_id].rank}"), supporting)
    assert "#13" in supporting  # tp-stemi-n2 is the card numbered #13


def test_a_rationale_cut_by_the_reply_format_says_so(stemi):
    shown = text(stemi["sema"])  # the A-Agent's summary, copied as the rationale, stops at "The centre can reo"
    assert "The centre can reo …" in shown
    assert shown.count("stops mid-sentence at 200 characters") >= 3  # the report, the reply's field, the answer card


def test_a_repeated_conflict_is_drawn_once_with_its_count(stemi):
    shown = text(stemi["sema"])
    conflict = "The ECG shows 3 mm ST elevation in leads II, III and aVF with ST depression in I and aVL"
    lines = [line for line in shown.splitlines() if line.startswith("- " + conflict) and "×2, repeated" in line]
    assert len(lines) == 1


def test_a_quote_that_failed_the_span_check_shows_the_words_that_failed(stemi):
    shown = text(stemi["mass"])  # the Extractor ended its quote of tp-stemi-k1 with "higher..."
    assert 'with higher<span class="unverified">...</span>" not verbatim in tp-stemi-k1' in shown


def test_a_document_with_one_verbatim_quote_is_kept_whatever_else_was_quoted_from_it():
    items = [
        VerdictItem(doc_id="tp-stemi-k5", keep=True, reason='"primary PCI within 120 minutes" verbatim in tp-stemi-k5'),
        VerdictItem(doc_id="tp-stemi-k5", keep=False, reason='"PCI is always best" not verbatim in tp-stemi-k5'),
    ]
    event = Event(run_id="r", seq=0, stage="span check", agent="Extractor", payload=Verdict(items=items))
    verdict = Evidence.of([event]).verdicts["tp-stemi-k5"]
    assert verdict.keep and "not verbatim" in verdict.reason and " verbatim in" in verdict.reason


def test_the_final_answer_line_links_what_it_cites(stemi):
    run = stemi["mass"]
    line = next(line for line in text(run).splitlines() if "**Final answer:**" in line)
    assert all(f'data-doc="{doc_id}"' in line for doc_id in run.answer.cited)
