"""The teaching pack: clinical cases written for workshops, with passages tagged by the part they play.

Teaching material, not clinical guidance. Each case has a multiple-choice question and three kinds of
passage: ``key`` (the facts that answer it), ``near_miss`` (same organ or presentation, wrong
condition) and ``outdated`` (guidance since revised, with what replaced it). ``passages.jsonl`` is
also an ordinary corpus in the MedRAG chunk format, so a retriever can index it like any other;
``load_cases`` gives the UI its example cases and the retrieval benchmark its question -> key
passages pairs.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Literal, get_args

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from core.engine.paths import TEACHING_PACK
from core.engine.question import Question

PACK_DIR = TEACHING_PACK
CASES_FILE = "cases.json"
PASSAGES_FILE = "passages.jsonl"
Notice = Literal["teaching material, not clinical guidance"]
NOTICE: str = get_args(Notice)[0]

Role = Literal["key", "near_miss", "outdated"]
ROLES: tuple[Role, ...] = ("key", "near_miss", "outdated")


class TeachingPackError(ValueError):
    """A pack file that cannot be used; the message names the file and the line or case at fault."""


class TeachingPassage(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    id: str = Field(pattern=r"^tp-\S+$")
    title: str = Field(min_length=1)
    content: str = Field(min_length=1)
    contents: str  # "<title>. <content>", the field MedRAG retrievers index
    case_id: str
    role: Role
    specialty: str
    note: Notice
    superseded_by: str | None = None  # outdated passages only: what current guidance says, and since when

    @model_validator(mode="after")
    def _consistent(self) -> TeachingPassage:
        if self.contents != f"{self.title}. {self.content}":
            raise ValueError('"contents" must be the title, a full stop and a space, then the content')
        if self.role == "outdated" and not self.superseded_by:
            raise ValueError('an outdated passage needs "superseded_by": what current guidance says, and since when')
        if self.role != "outdated" and self.superseded_by is not None:
            raise ValueError(f'only outdated passages have "superseded_by"; this one is {self.role}')
        return self


class TeachingCase(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    id: str = Field(pattern=r"^[a-z0-9-]+$")
    specialty: str
    title: str = Field(min_length=1)
    condition_terms: list[str] = Field(min_length=1)  # names of the condition that its key passages use
    question: str  # vignette and stem
    options: dict[str, str]
    answer: str
    teaching_note: str = Field(min_length=1)
    key_passages: list[str] = Field(min_length=1)
    near_miss_passages: list[str] = []
    outdated_passages: list[str] = []
    note: Notice

    @model_validator(mode="after")
    def _answerable(self) -> TeachingCase:
        try:
            question = self.to_question()
        except ValidationError as exc:
            raise ValueError(_describe(exc)) from None
        if not question.is_multiple_choice:
            raise ValueError("a teaching case needs lettered options")
        if self.answer not in self.options:
            raise ValueError(f"answer {self.answer!r} is not one of the options {', '.join(self.options)}")
        return self

    def to_question(self) -> Question:
        return Question(text=self.question, options=self.options)

    def passage_ids(self, role: Role) -> list[str]:
        return {"key": self.key_passages, "near_miss": self.near_miss_passages, "outdated": self.outdated_passages}[
            role
        ]


def load_passages(path: Path = PACK_DIR / PASSAGES_FILE) -> list[TeachingPassage]:
    """Every passage, in file order; the first bad line or repeated id stops loading with its line number."""
    path = Path(path)
    passages: list[TeachingPassage] = []
    first_line: dict[str, int] = {}
    for lineno, line in enumerate(_read(path).splitlines(), 1):
        if not line.strip():
            continue
        try:
            passage = TeachingPassage.model_validate_json(line)
        except ValidationError as exc:
            raise TeachingPackError(f"{path}, line {lineno}: {_describe(exc)}") from None
        if passage.id in first_line:
            raise TeachingPackError(
                f"{path}, line {lineno}: id {passage.id!r} is already used on line {first_line[passage.id]}"
            )
        first_line[passage.id] = lineno
        passages.append(passage)
    return passages


def load_cases(path: Path = PACK_DIR / CASES_FILE, passages_path: Path | None = None) -> list[TeachingCase]:
    """Every case, checked against its passages (by default the passages file beside ``path``)."""
    path = Path(path)
    try:
        raw = json.loads(_read(path))
    except json.JSONDecodeError as exc:
        raise TeachingPackError(f"{path}, line {exc.lineno}: not valid JSON ({exc.msg})") from None
    if not isinstance(raw, list):
        raise TeachingPackError(f"{path}: expected a JSON list of cases")
    cases: list[TeachingCase] = []
    for number, item in enumerate(raw, 1):
        try:
            cases.append(TeachingCase.model_validate(item))
        except ValidationError as exc:
            name = f" ({item['id']})" if isinstance(item, dict) and isinstance(item.get("id"), str) else ""
            raise TeachingPackError(f"{path}, case {number}{name}: {_describe(exc)}") from None
    passages_path = Path(passages_path) if passages_path else path.with_name(PASSAGES_FILE)
    _check_links(cases, load_passages(passages_path), path, passages_path)
    return cases


def _check_links(
    cases: list[TeachingCase], passages: list[TeachingPassage], cases_path: Path, passages_path: Path
) -> None:
    """Each listed id exists with that case and role, and each passage is listed by its case."""
    by_id = {p.id: p for p in passages}
    listed: set[str] = set()
    seen_cases: set[str] = set()
    for case in cases:
        if case.id in seen_cases:
            raise TeachingPackError(f"{cases_path}: case id {case.id!r} is used twice")
        seen_cases.add(case.id)
        for role in ROLES:
            for pid in case.passage_ids(role):
                passage = by_id.get(pid)
                where = f"{cases_path}, case {case.id!r}, {role}_passages"
                if passage is None:
                    raise TeachingPackError(f"{where}: {pid!r} is not in {passages_path}")
                if passage.case_id != case.id or passage.role != role:
                    raise TeachingPackError(
                        f"{where}: {pid!r} belongs to case {passage.case_id!r} as {passage.role} in {passages_path}"
                    )
                listed.add(pid)
    unlisted = [p.id for p in passages if p.id not in listed]
    if unlisted:
        raise TeachingPackError(
            f"{passages_path}: passages not listed by their case in {cases_path}: {', '.join(unlisted)}"
        )


def _read(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise TeachingPackError(f"{path}: file not found") from None
    except UnicodeDecodeError as exc:
        raise TeachingPackError(f"{path}: not UTF-8 text ({exc.reason} at byte {exc.start})") from None


def _describe(exc: ValidationError) -> str:
    """Pydantic's errors as one readable line: 'field: problem; field: problem'."""
    parts = []
    for error in exc.errors():
        field = ".".join(str(part) for part in error["loc"])
        message = error["msg"].removeprefix("Value error, ")
        parts.append(f"{field}: {message}" if field else message)
    return "; ".join(parts)


# -- teaching marks on a run ------------------------------------------------------------------


ROLE_WORDS: dict[str, str] = {"key": "key passage", "near_miss": "near miss", "outdated": "outdated"}


class PassageMark(BaseModel):
    """What a teaching-pack passage is for: its role in its case, and what the teacher should say about it."""

    model_config = ConfigDict(frozen=True)

    passage_id: str
    case_id: str
    case_title: str
    role: Role
    note: str  # the case's teaching note
    superseded_by: str | None = None

    @property
    def word(self) -> str:
        return ROLE_WORDS[self.role]


class TeachingPack:
    """The pack's cases and passages together: marks by passage id, and the case a question comes from."""

    def __init__(self, cases: list[TeachingCase], passages: list[TeachingPassage]):
        self.cases = cases
        by_case = {c.id: c for c in cases}
        self.marks = {
            p.id: PassageMark(
                passage_id=p.id,
                case_id=p.case_id,
                case_title=by_case[p.case_id].title,
                role=p.role,
                note=by_case[p.case_id].teaching_note,
                superseded_by=p.superseded_by,
            )
            for p in passages
            if p.case_id in by_case
        }

    @classmethod
    def load(cls, path: Path = PACK_DIR / CASES_FILE) -> TeachingPack:
        return cls(load_cases(path), load_passages(Path(path).with_name(PASSAGES_FILE)))

    def case_marks(self, question: str, options: dict[str, str]) -> dict[str, PassageMark]:
        """The marks of the case this question is, by passage id; none for any other question. A passage's role
        belongs to its own case: a benchmark question that retrieves it, or another case, learns nothing from it."""
        case = self.case_for(question, options)
        return {} if case is None else {i: m for i, m in self.marks.items() if m.case_id == case.id}

    def case_for(self, question: str, options: dict[str, str]) -> TeachingCase | None:
        """The case whose question this is (same text and options, spacing aside)."""
        text = " ".join(question.split())
        return next((c for c in self.cases if " ".join(c.question.split()) == text and c.options == options), None)


class CaseTally(BaseModel):
    """How a run met its case's passages: which it retrieved (met) and which its answer cited."""

    case: TeachingCase
    met: dict[Role, list[str]]
    cited: dict[Role, list[str]]

    def line(self) -> str:
        """e.g. 'met 2 of 3 key passages, cited the outdated one'."""
        keys = len(self.case.key_passages)
        parts = [f"met {len(self.met['key'])} of {keys} key passage{'s' if keys != 1 else ''}"]
        if self.cited["key"]:
            parts.append(f"cited {len(self.cited['key'])} of them")
        for role, word in (("outdated", "outdated"), ("near_miss", "near-miss")):
            cited, met = self.cited[role], self.met[role]
            if cited:
                parts.append(f"cited the {word} one" if len(cited) == 1 else f"cited {len(cited)} {word} ones")
            elif met:
                parts.append(f"met the {word} one" if len(met) == 1 else f"met {len(met)} {word} ones")
        return ", ".join(parts)


def tally(case: TeachingCase, met_ids: list[str], cited_ids: list[str]) -> CaseTally:
    met, cited = set(met_ids), set(cited_ids)
    return CaseTally(
        case=case,
        met={r: [i for i in case.passage_ids(r) if i in met] for r in ROLES},
        cited={r: [i for i in case.passage_ids(r) if i in cited] for r in ROLES},
    )
