import pytest
from pydantic import ValidationError

from core.engine.question import MAX_QUESTION_CHARS, Question


def test_empty_question_is_refused_clearly():
    with pytest.raises(ValidationError, match="The question is empty"):
        Question(text="   \n")


def test_huge_question_is_refused_with_its_length():
    with pytest.raises(ValidationError, match=f"{MAX_QUESTION_CHARS + 1:,} characters long"):
        Question(text="x" * (MAX_QUESTION_CHARS + 1))


def test_one_option_is_not_multiple_choice():
    with pytest.raises(ValidationError, match="at least two options"):
        Question(text="q?", options={"A": "only"})


def test_empty_option_text_is_refused():
    with pytest.raises(ValidationError, match="needs a text"):
        Question(text="q?", options={"A": "a", "B": " "})


def test_render_lists_options():
    q = Question(text=" Which? ", options={"A": "one", "B": "two"})
    assert q.text == "Which?" and q.is_multiple_choice
    assert q.render() == "Which?\n\nOptions:\nA. one\nB. two"
    assert Question(text="Open?").render() == "Open?"
