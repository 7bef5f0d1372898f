"""Teaching marks: each pack passage's role and note, the case a question comes from, a run's tally."""

from __future__ import annotations

from core.studio.teaching import TeachingPack, tally


def test_every_pack_passage_has_a_mark_with_its_role_and_the_case_note():
    pack = TeachingPack.load()
    asthma = next(c for c in pack.cases if c.id == "asthma")
    mark = pack.marks["tp-asthma-o1"]
    assert mark.role == "outdated" and mark.word == "outdated" and mark.case_id == "asthma"
    assert mark.note == asthma.teaching_note and "2019" in mark.superseded_by
    assert pack.marks["tp-asthma-k1"].word == "key passage" and pack.marks["tp-asthma-n1"].word == "near miss"
    assert "hpo-HP:0000001" not in pack.marks
    assert len(pack.marks) == sum(len(c.passage_ids(r)) for c in pack.cases for r in ("key", "near_miss", "outdated"))


def test_a_run_carries_only_its_own_cases_marks():
    pack = TeachingPack.load()
    asthma = next(c for c in pack.cases if c.id == "asthma")
    own = pack.case_marks(asthma.question, asthma.options)
    assert set(own) == set(asthma.key_passages + asthma.near_miss_passages + asthma.outdated_passages)
    assert pack.case_marks("A 23-year-old woman at 6 weeks' gestation has a headache.", {"A": "x", "B": "y"}) == {}


def test_the_case_of_a_question_is_found_by_its_text_and_options_only():
    pack = TeachingPack.load()
    asthma = next(c for c in pack.cases if c.id == "asthma")
    assert pack.case_for("  " + asthma.question.replace(" ", "  ") + "\n", dict(asthma.options)) is asthma
    assert pack.case_for(asthma.question, {"A": "other", "B": "options"}) is None
    assert pack.case_for("A question of my own", {}) is None


def test_the_tally_says_what_a_run_met_and_cited():
    asthma = next(c for c in TeachingPack.load().cases if c.id == "asthma")
    line = tally(
        asthma, ["tp-asthma-o1", "tp-asthma-k1", "tp-asthma-k2", "tp-x"], ["tp-asthma-o1", "tp-asthma-k1"]
    ).line()
    assert line == "met 2 of 4 key passages, cited 1 of them, cited the outdated one"
    line = tally(asthma, ["tp-asthma-k3", "tp-asthma-n1", "tp-asthma-n2"], []).line()
    assert line == "met 1 of 4 key passages, met 2 near-miss ones"
    assert tally(asthma, [], []).line() == "met 0 of 4 key passages"
