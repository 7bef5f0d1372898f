"""The answer/rationale check: a letter that its own reasoning argues against is flagged, and only then."""

from __future__ import annotations

import pytest

from core.consistency import check_answer, named_options
from core.trace import Answer

ASTHMA = {"A": "Salbutamol as needed alone, with no controller", "B": "Regular salmeterol on its own",
          "C": "Low-dose budesonide-formoterol taken as needed for symptoms",
          "D": "Regular high-dose inhaled corticosteroid plus a long-acting muscarinic antagonist"}


@pytest.mark.parametrize("choice, rationale, argued", [
    ("A", "Low-dose budesonide-formoterol as needed is what GINA prefers.", "C"),  # by a word only C has
    ("A", "The answer is C because GINA changed its advice in 2019.", "C"),  # by letter
    ("B", "Salbutamol alone is outdated; option A is wrong, so (D) then.", "D"),  # the last option named
])
def test_a_letter_its_reasoning_argues_against_is_flagged(choice, rationale, argued):
    mismatch = check_answer(Answer(choice=choice, text=ASTHMA[choice], rationale=rationale), ASTHMA)
    assert mismatch is not None and mismatch.chosen == choice and mismatch.argued == argued
    assert f"The answer is {choice}, but its reasoning argues for {argued}" in mismatch.message(ASTHMA)


@pytest.mark.parametrize("choice, rationale", [
    ("C", "ICS-formoterol as needed is preferred over salbutamol alone."),  # names C (and A): no flag
    ("A", "She has mild asthma, so a reliever is enough."),  # names no option: nothing to compare
    ("C", "C. budesonide"),
    ("D", "Regular high-dose inhaled corticosteroid plus a long-acting muscarinic antagonist controls it."),
])
def test_a_consistent_or_silent_rationale_is_not_flagged(choice, rationale):
    assert check_answer(Answer(choice=choice, text=ASTHMA[choice], rationale=rationale), ASTHMA) is None


def test_free_text_answers_and_empty_rationales_are_not_checked():
    assert check_answer(Answer(text="insulin", rationale="The answer is B."), {}) is None
    assert check_answer(Answer(choice="A", text="x", rationale=""), ASTHMA) is None
    assert check_answer(None, ASTHMA) is None


def test_options_are_named_in_the_order_the_rationale_names_them():
    assert named_options("Not salmeterol alone (B); budesonide-formoterol as needed.", ASTHMA) == ["B", "C"]
    assert named_options("A single word like a or an is not a letter reference.", ASTHMA) == []


def test_words_the_rationale_repeats_from_the_question_do_not_name_an_option():
    stem = "She uses a salbutamol inhaler once or twice a month."
    rationale = "She uses salbutamol rarely; regular high-dose inhaled corticosteroid plus a LAMA is best."
    assert named_options(rationale, ASTHMA) == ["A", "D"]  # without the question, 'salbutamol' names A
    assert named_options(rationale, ASTHMA, stem) == ["D"]
    assert check_answer(Answer(choice="B", text=ASTHMA["B"], rationale="The answer is D; she uses salbutamol."),
                        ASTHMA, stem).argued == "D"
