"""The question editor shared by Ask and Compare: free text or lettered options, or a teaching-pack case."""

from __future__ import annotations

import string
from collections.abc import Callable
from typing import Any

import streamlit as st
from pydantic import ValidationError

from core.engine.question import Question
from core.studio.teaching import TeachingCase
from ui.common import keys
from ui.common.state import kept, preset, set_kept
from ui.runs.teaching_view import pack, pack_problem

FORMATS = ("Multiple choice", "Free text")
LETTERS = string.ascii_uppercase[:10]
START_OPTIONS = 4


def teaching_cases() -> list[TeachingCase]:
    found = pack()
    return found.cases if found else []


def _case(case_id: str | None) -> TeachingCase | None:
    return next((c for c in teaching_cases() if c.id == case_id), None)


# -- lettered options -------------------------------------------------------------------------


def _ids(key: str) -> list[int]:
    if keys.form_options(key) not in st.session_state:
        st.session_state[keys.form_options(key)] = list(range(START_OPTIONS))
        st.session_state[keys.form_next_option(key)] = START_OPTIONS
    return st.session_state[keys.form_options(key)]


def _add_option(key: str) -> None:
    ids = _ids(key)
    ids.append(st.session_state[keys.form_next_option(key)])
    st.session_state[keys.form_next_option(key)] += 1


def _remove_option(key: str, uid: int) -> None:
    _ids(key).remove(uid)
    st.session_state.pop(keys.kept(keys.form_option(key, uid)), None)


def _fill_options(key: str, texts: list[str], put: Callable[[str, Any], None] = set_kept) -> None:
    start = st.session_state.get(keys.form_next_option(key), 0)
    st.session_state[keys.form_options(key)] = list(range(start, start + len(texts)))
    st.session_state[keys.form_next_option(key)] = start + len(texts)
    for uid, text in zip(st.session_state[keys.form_options(key)], texts):
        put(keys.form_option(key, uid), text)


def option_editor(key: str) -> dict[str, str]:
    ids = _ids(key)
    options = {}
    for letter, uid in zip(LETTERS, ids):
        left, middle, right = st.columns([0.05, 0.82, 0.13], vertical_alignment="center")
        left.markdown(f"**{letter}**")
        with middle:
            options[letter] = kept(
                st.text_input,
                f"Option {letter}",
                key=keys.form_option(key, uid),
                default="",
                label_visibility="collapsed",
                placeholder=f"Option {letter}",
            )
        right.button(
            "×", key=f"{key}.remove.{uid}", help=f"Remove option {letter}", on_click=_remove_option, args=(key, uid)
        )
    st.button(
        "Add option",
        icon=":material/add:",
        key=f"{key}.add",
        on_click=_add_option,
        args=(key,),
        disabled=len(ids) >= len(LETTERS),
    )
    return options


# -- the whole form ---------------------------------------------------------------------------


def _load_case(key: str) -> None:
    case = _case(st.session_state.get(keys.form_case(key)))
    if case is None:
        return
    set_kept(keys.form_text(key), case.question)
    set_kept(keys.form_format(key), FORMATS[0] if case.options else FORMATS[1])
    _fill_options(key, list(case.options.values()))


def preset_question(key: str, text: str, options: dict[str, str]) -> None:
    """The form, not on screen now, opens next time with this question and its options (to ask it again)."""
    found = pack()
    case = found.case_for(text, options) if found else None
    preset(keys.form_case(key), case.id if case else None)
    preset(keys.form_text(key), text)
    preset(keys.form_format(key), FORMATS[0] if options else FORMATS[1])
    _fill_options(key, list(options.values()) or [""] * START_OPTIONS, preset)


def case_picker(key: str) -> None:
    cases, problem = teaching_cases(), pack_problem()
    if problem:
        st.caption(problem)
        return
    by_id = {c.id: c for c in cases}
    kept(
        st.selectbox,
        "Start from a teaching case (teaching material, not clinical guidance)",
        key=keys.form_case(key),
        default=None,
        options=[None, *by_id],
        on_change=_load_case,
        args=(key,),
        placeholder="—",
        format_func=lambda i: "—" if i is None else f"{by_id[i].specialty.capitalize()} · {by_id[i].title}",
    )


def question_form(key: str) -> tuple[str, dict[str, str] | None]:
    """The question text and its options as typed (None for a free-text question)."""
    case_picker(key)
    text = kept(
        st.text_area,
        "Question",
        key=keys.form_text(key),
        default="",
        height=150,
        placeholder="e.g. A 58-year-old with crushing chest pain and ST elevation in II, III and aVF: "
        "which artery is most likely occluded?",
    )
    answer_format = kept(
        st.radio, "Answer format", key=keys.form_format(key), default=FORMATS[0], options=FORMATS, horizontal=True
    )
    return text, option_editor(key) if answer_format == FORMATS[0] else None


NO_OPTIONS = (
    "Multiple choice needs at least two options: add them with “Add option”, or switch the answer format to Free text."
)


def parse_question(text: str, options: dict[str, str] | None) -> tuple[Question | None, list[str]]:
    """The checked question, or the reasons it cannot be asked (in the words of core.engine.question). A multiple-choice
    question with no options is refused rather than asked as free text."""
    problems = [NO_OPTIONS] if options == {} else []
    try:
        question = Question(text=text, options=options or {})
    except ValidationError as exc:
        return None, problems + [e["msg"].removeprefix("Value error, ") for e in exc.errors()]
    return (None, problems) if problems else (question, [])
