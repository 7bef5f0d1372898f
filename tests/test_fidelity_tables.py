"""docs/fidelity/<method>.md stays true to the code: every method has its file, the Steps, Defaults and Lengths tables
have the agreed columns, every knob has a Defaults row and every length a Lengths row, each value in them is the
code's, and every file of this repository the tables name exists."""

from __future__ import annotations

import ast
import dataclasses
import importlib
import re
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel

from core.engine.methods import answer, registry

REPO = Path(__file__).resolve().parents[1]
DOCS = REPO / "docs" / "fidelity"
STEPS = ["Step", "Paper", "Reference code", "This project", "Difference and why"]
DEFAULTS = ["Knob", "Paper", "Reference code", "This project", "Why"]
LENGTHS = ["Length", "Compact (the embedded model)", "Paper (every endpoint)", "Source of the paper's"]
CODE = re.compile(r"^`([^`]+)`$")
# A path of this repository in backticks, up to a ":function" or "#section" that follows it.
# Notes a reader cannot open: the design document and the paper summaries the project started from.
OUTSIDE = re.compile(r"DESIGN\.md|design notes|project's seeds|seeds \(`\d+`\)")
REPO_PATH = re.compile(r"`((?:core|docs|tests|benchmarks|ui|data|assets)/[^`:#\s]+)")


def cells(line: str) -> list[str]:
    return [c.strip() for c in line.strip().strip("|").split("|")]


def table(text: str, section: str) -> tuple[list[str], list[list[str]]]:
    """The header and body rows of the first table under ``## <section>``."""
    match = re.search(rf"^## {section}\n(.*?)(?=^## |\Z)", text, re.MULTILINE | re.DOTALL)
    assert match, f"no '## {section}' section"
    lines = [line for line in match.group(1).splitlines() if line.startswith("|")]
    assert len(lines) >= 3, f"'## {section}' has no table with rows"
    assert set(lines[1].replace("|", "").replace(" ", "")) <= set("-:"), f"'## {section}': second line is no separator"
    header, rows = cells(lines[0]), [cells(line) for line in lines[2:]]
    for row in rows:
        assert len(row) == len(header), f"'## {section}': a row has {len(row)} cells, not {len(header)}: {row}"
    return header, rows


def code(cell: str, where: str) -> str:
    match = CODE.match(cell)
    assert match, f"{where}: {cell!r} is not one value in backticks"
    return match.group(1)


def default(params: type[BaseModel], name: str):
    return params.model_fields[name].get_default(call_default_factory=True)


def load(name: str):
    spec = registry()[name]
    path = DOCS / f"{name}.md"
    assert path.is_file(), f"{path} is missing"
    return spec, path.read_text(encoding="utf-8")


METHODS = pytest.mark.parametrize("name", list(registry()))


@METHODS
def test_file_names_the_method_and_has_the_steps_table(name):
    spec, text = load(name)
    assert text.splitlines()[0] == f"# {spec.label}: the paper, the authors' code, and this project"
    header, rows = table(text, "Steps")
    assert header == STEPS
    assert all(row[0] and row[4] for row in rows)  # every step is named and says whether it differs


@METHODS
def test_defaults_table_has_every_knob_with_the_codes_default(name):
    spec, text = load(name)
    header, rows = table(text, "Defaults")
    assert header == DEFAULTS
    knobs = [code(row[0], f"{spec.name}.md Defaults") for row in rows]
    assert sorted(knobs) == sorted(spec.params.model_fields), "one row per knob, no more, no fewer"
    for knob, row in zip(knobs, rows):
        shown = ast.literal_eval(code(row[3], f"{spec.name}.md `{knob}`"))
        actual = default(spec.params, knob)
        assert shown == actual and type(shown) is type(actual), f"{spec.name}.md `{knob}`: {shown!r}, code {actual!r}"
        assert row[4], f"{spec.name}.md `{knob}`: no Why"


def value(expression: str) -> Any:
    """A cell's value: a Python literal, or an expression over core/engine/methods/answer.py's names (``READER["paper"]``)."""
    try:
        return ast.literal_eval(expression)
    except ValueError:
        return eval(expression, dict(vars(answer)))  # the repository's own tables, not input


@METHODS
def test_lengths_table_has_every_length_with_the_codes_values(name):
    spec, text = load(name)
    header, rows = table(text, "Lengths")
    assert header == LENGTHS
    sets = importlib.import_module(spec.run.__module__).LENGTHS
    assert set(sets) == {"compact", "paper"}
    names = [code(row[0], f"{spec.name}.md Lengths") for row in rows]
    assert sorted(names) == sorted(f.name for f in dataclasses.fields(sets["compact"])), "one row per length"
    for length, row in zip(names, rows):
        for cell, which in ((row[1], "compact"), (row[2], "paper")):
            shown = value(code(cell, f"{spec.name}.md `{length}`"))
            actual = getattr(sets[which], length)
            assert shown == actual and type(shown) is type(actual), (
                f"{spec.name}.md `{length}` {which}: {shown!r}, code {actual!r}"
            )
        assert row[3], f"{spec.name}.md `{length}`: no source"


def test_every_file_of_this_repository_the_tables_name_exists():
    for doc in DOCS.glob("*.md"):
        text = doc.read_text(encoding="utf-8")
        for path in REPO_PATH.findall(text):
            assert list(REPO.glob(path)), f"{doc.name} names {path}, which is not in the repository"
        assert not OUTSIDE.search(text), f"{doc.name} cites {OUTSIDE.search(text).group()}, outside the repository"


def test_index_links_every_method_file():
    index = (DOCS / "README.md").read_text(encoding="utf-8")
    for spec in registry().values():
        assert f"]({spec.name}.md)" in index, spec.name


def test_repository_readme_links_the_index():
    readme = (DOCS.parents[1] / "README.md").read_text(encoding="utf-8")
    assert "docs/fidelity/README.md" in readme
