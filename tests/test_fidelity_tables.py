"""docs/fidelity/<method>.md stays true to the code: every method has its file, the Steps and Defaults tables have
the agreed columns, every knob has a Defaults row, and each row's "This project" default is the code's."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest
from pydantic import BaseModel

from core.methods import registry

DOCS = Path(__file__).resolve().parents[1] / "docs" / "fidelity"
STEPS = ["Step", "Paper", "Reference code", "This project", "Difference and why"]
DEFAULTS = ["Knob", "Paper", "Reference code", "This project", "Why"]
CODE = re.compile(r"^`([^`]+)`$")


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


def test_index_links_every_method_file():
    index = (DOCS / "README.md").read_text(encoding="utf-8")
    for spec in registry().values():
        assert f"]({spec.name}.md)" in index, spec.name


def test_repository_readme_links_the_index():
    readme = (DOCS.parents[1] / "README.md").read_text(encoding="utf-8")
    assert "docs/fidelity/README.md" in readme
