"""The Annotate page and the Labels tab of the trace views, driven by Streamlit's AppTest over a real store."""

from __future__ import annotations

import pytest
from streamlit.testing.v1 import AppTest

from core.engine.question import Question
from core.engine.store import RunStore
from core.studio.eval.mirage import BenchItem
from core.studio.eval.results import EvalResults
from core.studio.labels import LabelStore, collect, resolve
from core.studio.teaching import load_cases
from tests.labels.helpers import hit, save_run

CASE = load_cases()[0]
NAME_BOX = "annotate.name_input"
START = "FormSubmitter:annotate.who-Start labelling"


@pytest.fixture
def runs():
    store = RunStore()
    medrag = save_run(store, "medrag", [hit("s1"), hit("s2"), hit("s3")], question=CASE.question, options=CASE.options)
    medrgag = save_run(
        store,
        "medrgag",
        [hit("s3"), hit("s4")],
        generated=["Written background on the artery."],
        question=CASE.question,
        options=CASE.options,
    )
    return medrag, medrgag


def annotate_page(name: str | None = None) -> AppTest:
    at = AppTest.from_string("from ui.annotate.page import page\npage()", default_timeout=30).run()
    if name is not None:
        at.text_input(key=NAME_BOX).input(name)
        at.button(key=START).click().run()
    return at


def table(at: AppTest, column: str):
    return next(d.value for d in at.dataframe if column in d.value.columns)


def grade_button(at: AppTest, grade: int):
    """The grade button of the passage on screen (its key names the passage)."""
    return next(b for b in at.button if b.key.startswith("annotate.grade.") and b.key.endswith(f".{grade}"))


def text_of(at: AppTest) -> str:
    return "\n".join(m.value for m in at.markdown).replace("\\", "")  # Markdown escapes dropped


def test_an_empty_name_is_refused_with_a_message(runs):
    at = annotate_page("   ")
    assert "annotator name is empty" in at.error[0].value
    assert "Type your name above to start judging." in [i.value for i in at.info]
    assert LabelStore().labels() == []


def test_blind_judging_hides_origin_saves_at_once_and_moves_to_the_next_unjudged(runs):
    at = annotate_page("ann")
    assert not at.exception
    text = text_of(at)
    assert "Passage 1 of 5" in text and CASE.question[:40] in text
    passage = next(m.value for m in at.markdown if 'class="snip judge"' in m.value)
    for hidden in ("medrag", "medrgag", "score", "generated", "teaching", "#", "gen-"):  # origin, rank, id
        assert hidden not in passage, hidden
    assert "medrag" not in text.lower() and "Gold answer" not in " ".join(s.value for s in at.success)
    next(t for t in at.text_input if t.label.startswith("Note")).input("names the artery")
    grade_button(at, 3).click().run()
    [label] = LabelStore().labels()
    assert (label.annotator, label.grade, label.note) == ("ann", 3, "names the artery")
    assert "Passage 2 of 5" in text_of(at)  # moved on by itself, saying what it saved
    assert ":material/check: Saved: passage 1 graded 3 · key" in [c.value for c in at.caption]
    assert "1/5 snippets judged" in at.caption[1].value
    for _ in range(4):
        grade_button(at, 0).click().run()
    assert len(LabelStore().labels()) == 5 and at.button(key="annotate.next_unjudged").disabled
    assert "judged every passage of this question" in at.success[0].value


def test_the_queue_of_an_evaluation_offers_the_datasets_benchmarks_have_results_for(runs):
    medrag, _ = runs
    at = annotate_page("ann")
    at.radio(key="annotate.source").set_value("eval").run()
    assert at.multiselect(key="annotate.datasets").options == []
    results = EvalResults(RunStore())
    for dataset in ("pubmedqa", "medqa"):
        results.record(
            "cot-1", BenchItem(dataset, "q1", Question(text=medrag.question, options=medrag.options), "A"), medrag
        )
    at.run()
    assert at.multiselect(key="annotate.datasets").options == ["medqa", "pubmedqa"]


def test_open_mode_shows_methods_ranks_labels_and_the_gold_answer(runs):
    at = annotate_page("ann")
    at.toggle(key="annotate.open").set_value(True).run()
    at.toggle(key="annotate.advance").set_value(False).run()
    grade_button(at, 2).click().run()
    text = text_of(at)
    assert "shown by medrag #1" in text and "labels: ann: 2 relevant" in text
    assert f"Gold answer: {CASE.answer}" in at.success[0].value


def test_two_annotators_then_agreement_adjudication_and_metrics(runs):
    [q] = collect(RunStore().path)
    labels = LabelStore()
    for who, grades in {"ann": [3, 2, 0, 1, 3], "bob": [3, 0, 0, 1, 2]}.items():
        for item, grade in zip(q.items, grades):
            labels.set_label(q.ref, item.pool_id, who, grade)
    at = annotate_page("ann")
    at.session_state["annotate.view"] = "Agreement"  # only the open tab is computed
    at.run()
    kappa = table(at, "kappa")
    assert list(kappa["annotators"]) == ["ann / bob"] and list(kappa["n (both judged)"]) == [5]
    assert "**Disagreements** · 1" in text_of(at)
    next(w for w in at.segmented_control if w.label == "Final label (adjudication)").set_value(2).run()
    [final] = labels.finals()
    assert (final.grade, final.adjudicator) == (2, "ann")
    at.session_state["annotate.view"] = "Metrics"
    at.run()
    summary = table(at, "runs")
    assert set(summary["method"]) == {"MedRAG", "MedRGAG"} and set(summary["questions"]) == {1}
    assert len(at.get("plotly_chart")) == 1


def test_the_history_trace_labels_snippets_in_place_and_warns_when_the_run_was_deleted(runs):
    medrag, _ = runs
    at = AppTest.from_string("from ui.history.page import page\npage()", default_timeout=30).run()
    at.selectbox(key="history.open").set_value(medrag.id).run()
    at.text_input(key="labels-history.name_input").input("cy")
    at.button(key="FormSubmitter:labels-history.who-Start labelling").click().run()
    assert "not judged yet" in [c.value for c in at.caption]
    at.segmented_control(key=f"labels-history-{medrag.id}-s1").set_value(3).run()
    assert [(r.snippet_id, r.annotator, r.grade) for r in LabelStore().labels()] == [("s1", "cy", 3)]
    assert "1× 3 key" in [c.value for c in at.caption]
    RunStore().delete_run(medrag.id)  # deleted in another session while this one still shows it
    at.segmented_control(key=f"labels-history-{medrag.id}-s2").set_value(1).run()
    assert "was deleted meanwhile. Your label is saved" in at.toast[0].value
    assert {r.snippet_id for r in LabelStore().labels()} == {"s1", "s2"}  # nothing lost


def test_with_openid_login_the_logged_in_user_labels_and_a_logged_out_one_is_asked_to_log_in(runs):
    at = AppTest.from_string("from ui.annotate.page import page\npage()", default_timeout=30)
    at.user = {"is_logged_in": False}
    at.run()
    assert at.button(key="annotate.login").label == "Log in" and not at.text_input
    at.user = {"is_logged_in": True, "email": "dr.rahman@example.org", "name": "A. Rahman"}
    at.run()
    assert "Labelling as **dr.rahman@example.org** (logged in)" in [c.value for c in at.caption]
    grade_button(at, 2).click().run()
    assert [r.annotator for r in LabelStore().labels()] == ["dr.rahman@example.org"]


def test_three_annotators_who_disagree_get_one_adjudication_row_per_snippet_listing_every_grade(runs):
    [q] = collect(RunStore().path)
    labels = LabelStore()
    # s1 disputed by every pair (3, 1, 0): three disagreeing pairs, one snippet; s2 by two pairs (3 against 0, 0)
    for who, grades in {"ann": [3, 3, 2, 1, 3], "bob": [1, 0, 2, 1, 3], "cy": [0, 0, 2, 1, 3]}.items():
        for item, grade in zip(q.items, grades):
            labels.set_label(q.ref, item.pool_id, who, grade, note=f"{who} says so")
    at = annotate_page("ann")
    at.session_state["annotate.view"] = "Agreement"
    at.run()
    assert not at.exception
    assert "**Disagreements** · 2 snippets" in text_of(at)
    rows = [m.value for m in at.markdown if 'class="sides"' in m.value]
    assert len(rows) == 2
    for row in rows:  # every annotator's grade and note on the one row
        assert all(f"<b>{who}</b>" in row and f"{who} says so" in row for who in ("ann", "bob", "cy"))
    assert 'grade-3">3' in rows[0] and 'grade-1">1' in rows[0] and 'grade-0">0' in rows[0]  # the widest gap first
    assert f"Case “{CASE.title}”" in text_of(at)  # the question by its case, not by its hash
    widgets = [w for w in at.segmented_control if w.label == "Final label (adjudication)"]
    assert len(widgets) == 2
    widgets[1].set_value(1).run()
    assert not at.exception and [(f.grade, f.adjudicator) for f in labels.finals()] == [(1, "ann")]


def test_adjudication_comes_ten_disputed_snippets_a_page_each_text_folded_under_its_first_words():
    store = RunStore()
    long_text = "Aspirin within the first hour. " * 30  # the full text stays folded
    save_run(store, "medrag", [hit(f"s{i}", long_text + str(i), rank=i) for i in range(1, 13)])
    [q] = collect(store.path)
    labels = LabelStore()
    for item in q.items:
        labels.set_label(q.ref, item.pool_id, "ann", 3)
        labels.set_label(q.ref, item.pool_id, "bob", 0)
    at = annotate_page("ann")
    at.session_state["annotate.view"] = "Agreement"
    at.run()
    assert "**Disagreements** · 12 snippets" in text_of(at)
    pages = at.selectbox(key="annotate.adjudication_page")
    assert pages.options == ["1–10 of 12", "11–12 of 12"]
    rows = [m.value for m in at.markdown if 'class="sides"' in m.value]
    assert len(rows) == 10 and all("<b>ann</b>" in r and "<b>bob</b>" in r for r in rows)
    folded = [e for e in at.expander if e.label.startswith(("1. ", "10. "))]
    assert len(folded) == 2 and all(len(e.label) < 130 and e.label.endswith("…") for e in folded)
    pages.set_value(10).run()
    assert len([m for m in at.markdown if 'class="sides"' in m.value]) == 2
    final = next(w for w in at.segmented_control if w.label == "Final label (adjudication)")
    final.set_value(2).run()
    assert not at.exception and len(labels.finals()) == 1


def test_metrics_say_when_methods_were_judged_on_different_questions_and_offer_the_shared_ones(runs):
    store = RunStore()
    save_run(store, "medrag", [hit("s9")], question="Which artery supplies the inferior wall?", options={})
    questions = collect(store.path)
    labels = LabelStore()
    for q in questions:
        for item in q.items:
            labels.set_label(q.ref, item.pool_id, "ann", 3)
    at = annotate_page("ann")
    at.session_state["annotate.view"] = "Metrics"
    at.run()
    assert "judged on different questions (MedRAG 2, MedRGAG 1; 1 shared by all)" in at.warning[0].value
    assert set(table(at, "runs")["questions"]) == {1, 2}
    at.toggle(key="annotate.shared_only").set_value(True).run()
    assert set(table(at, "runs")["questions"]) == {1} and "1 questions" not in text_of(at)


def test_three_annotators_grading_six_each_on_the_default_queue_meet_on_at_least_five_snippets():
    """Four questions, each pooled from two methods' sixteen snippets and three generated documents (108 snippets):
    three annotators take turns, each grading the passage their default queue hands them, six each. Handed the
    passages others have begun first, they meet; shuffled each on their own, three would rarely meet at all."""
    store = RunStore()
    for q in range(4):
        question = f"Which drug treats disease {q}?"
        save_run(store, "medrag", [hit(f"q{q}-s{i}") for i in range(16)], question=question)
        save_run(
            store,
            "medrgag",
            [hit(f"q{q}-s{i}") for i in range(8, 24)],
            generated=[f"Background {q}.{g}" for g in range(3)],
            question=question,
        )
    pages = {name: annotate_page(name) for name in ("ann", "bob", "cy")}
    for _ in range(6):
        for at in pages.values():
            grade_button(at, 2).click().run()
    assert not any(at.exception for at in pages.values())
    rows = LabelStore().labels()
    assert len(rows) == 18
    judges = [len(who) for q in collect(store.path) for who in resolve(q, rows)[0].values()]
    met = sum(n >= 2 for n in judges)
    print(f"three annotators, six grades each: {met} of the {len(judges)} snippets judged have 2+ annotators")
    assert met >= 5
