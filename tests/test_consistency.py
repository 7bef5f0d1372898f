"""The answer/rationale check: a letter that its own reasoning argues against is flagged, and only then."""

from __future__ import annotations

import pytest

from core.engine.trace import Answer
from core.studio.consistency import check_answer, named_options

ASTHMA = {
    "A": "Salbutamol as needed alone, with no controller",
    "B": "Regular salmeterol on its own",
    "C": "Low-dose budesonide-formoterol taken as needed for symptoms",
    "D": "Regular high-dose inhaled corticosteroid plus a long-acting muscarinic antagonist",
}


@pytest.mark.parametrize(
    "choice, rationale, argued",
    [
        ("A", "Low-dose budesonide-formoterol as needed is what GINA prefers.", "C"),  # by a word only C has
        ("A", "The answer is C because GINA changed its advice in 2019.", "C"),  # by letter
        ("B", "Salbutamol alone is outdated; option A is wrong, so (D) then.", "D"),  # the last option named
    ],
)
def test_a_letter_its_reasoning_argues_against_is_flagged(choice, rationale, argued):
    mismatch = check_answer(Answer(choice=choice, text=ASTHMA[choice], rationale=rationale), ASTHMA)
    assert mismatch is not None and mismatch.chosen == choice and mismatch.argued == argued
    assert f"The answer is {choice}, but its reasoning argues for {argued}" in mismatch.message(ASTHMA)


@pytest.mark.parametrize(
    "choice, rationale",
    [
        ("C", "ICS-formoterol as needed is preferred over salbutamol alone."),  # names C (and A): no flag
        ("A", "She has mild asthma, so a reliever is enough."),  # names no option: nothing to compare
        ("C", "C. budesonide"),
        ("D", "Regular high-dose inhaled corticosteroid plus a long-acting muscarinic antagonist controls it."),
    ],
)
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
    assert (
        check_answer(
            Answer(choice="B", text=ASTHMA["B"], rationale="The answer is D; she uses salbutamol."), ASTHMA, stem
        ).argued
        == "D"
    )


DKA = {
    "A": "Intravenous 0.9% sodium chloride",
    "B": "Intravenous 8.4% sodium bicarbonate",
    "C": "Subcutaneous rapid-acting insulin and discharge with oral fluids",
    "D": "Intravenous potassium chloride 40 mmol over one hour",
}


def test_the_dka_case_an_answer_that_its_reasoning_rejects_is_flagged():
    """Recorded on the embedded model, answer first: C chosen, then IV insulin argued and C's route rejected."""
    rationale = (
        "The patient has severe hypoglycemia (capillary glucose of 28 mmol/L) and high blood ketones (5.2 "
        "mmol/L), which are signs of diabetic ketoacidosis (DKA). The most appropriate first step is to "
        "administer intravenous rapid-acting insulin to correct the hypoglycemia and to start the treatment "
        "of DKA. Subcutaneous rapid-acting insulin is not recommended for this patient because it would not "
        "be effective in correcting the hypoglycemia."
    )
    answer = Answer(choice="C", text=DKA["C"], rationale=rationale, answer_format="answer first")
    mismatch = check_answer(answer, DKA, "What is the most appropriate first step?")
    assert mismatch is not None and mismatch.argued is None
    assert mismatch.because.startswith("Subcutaneous rapid-acting insulin is not recommended")
    assert mismatch.message(DKA).startswith("The answer is C, but its reasoning argues against it")
    fluids = "Intravenous 0.9% sodium chloride is the most appropriate first step. Subcutaneous insulin is not."
    assert check_answer(Answer(choice="A", text=DKA["A"], rationale=fluids), DKA) is None


@pytest.mark.parametrize(
    "choice, rationale, flagged",
    [
        (
            "A",
            "Yeast LTRs are typically found in the 5' UTR of genes and are not known to give rise to circular DNA.",
            "B",
        ),
        ("B", "TNF-α is a pro-inflammatory cytokine that can activate pancreatic stellate cells.", "A"),
        ("B", "A 9-month treatment is typically considered insufficient for this condition.", None),  # 'in-' denies
        ("A", "G-H2AX is a marker for double strand breaks, but it is not a direct indicator of them.", None),
        ("B", "More research is needed to determine whether it improves outcomes of stroke patients.", None),  # a hedge
        ("B", "Peer review helps. Therefore, it is not definitively beneficial, and the answer is B. no.", None),
    ],
)
def test_yes_or_no_is_read_from_the_sentence_that_restates_the_question(choice, rationale, flagged):
    questions = {
        "LTR": "Do yeast LTR give rise to circular DNA?",
        "TNF": "Is TNF-α an activator of pancreatic stellate cells?",
        "month": "Is a 9-month treatment sufficient in tuberculous enterocolitis?",
        "H2AX": "Is g-H2AX a marker for double strand breaks?",
        "stroke": "Does gavestinel improve outcomes of stroke patients?",
        "Peer": "Is the peer review definitively beneficial?",
    }
    question = next(q for k, q in questions.items() if k in rationale)
    options = {"A": "yes", "B": "no"}
    mismatch = check_answer(Answer(choice=choice, text=options[choice], rationale=rationale), options, question)
    assert (mismatch.argued if mismatch else None) == flagged


def test_except_questions_nested_options_and_options_that_are_denials():
    shoulder = {"A": "Fundal pressure", "B": "Mc Roberts manoeuvre", "C": "Suprapubic pressure", "D": "Woods manoeuvre"}
    stem = "All are done in management of shoulder dystocia except:"
    says = "Woods manoeuvre is not typically performed in management of shoulder dystocia."
    assert check_answer(Answer(choice="D", text="", rationale=says), shoulder, stem) is None
    assert check_answer(Answer(choice="A", text="", rationale=says), shoulder, stem).argued == "D"
    nerve = {
        "A": "paralysis of the facial muscles.",
        "B": "paralysis of the facial muscles and loss of taste.",
        "C": "paralysis of the facial muscles, loss of taste and lacrimation.",
    }
    fullest = "It causes paralysis of the facial muscles, loss of taste, and lacrimation; that is the answer."
    assert check_answer(Answer(choice="A", text="", rationale=fullest), nerve).argued == "C"
    assert check_answer(Answer(choice="C", text="", rationale=fullest), nerve) is None
    teeth = {"A": "Amoxicillin 2 g by mouth one hour before", "C": "No antibiotic prophylaxis; keep up oral hygiene"}
    denial = "Mild regurgitation is not an indication for antibiotic prophylaxis; oral hygiene is advised instead."
    assert check_answer(Answer(choice="C", text="", rationale=denial), teeth) is None
