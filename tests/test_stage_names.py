"""Stage names: each method declares the names its events carry once, and the recorded workshop pack holds to them.

The pack is real runs of every method on the embedded model; a name a method emits but does not declare, a
declared name no run carries, or a map stage no event reaches shows up here. A name or stage that the pack cannot
show (an ablation's, a step only open questions take) is listed with the reason.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from core.engine.methods import registry
from core.engine.stages import Numbered, Runner, names, stage_of
from core.studio.workshop.pack import PACK_DIR, load_pack

METHODS_DIR = Path(registry()["cot"].run.__code__.co_filename).parent

# (method, constant) -> why no recorded run carries it: the pack records every method with its paper's defaults
# on the teaching pack's multiple-choice cases.
NOT_IN_PACK = {
    ("sema", "ANSWER"): "the reader answers only with the A-Agent switched off (an ablation)",
    ("medrgag", "GENERATION"): "generation without KGCC is an ablation",
    ("medrgag", "SELECTION"): "re-scoring without KADS is an ablation",
    (
        "mass",
        "CANDIDATE_ANSWERS",
    ): "the Answer Agent runs by default on open questions only; the pack's are multiple choice",
}
# (method, map stage label) -> why no recorded event belongs to it
STAGE_NOT_IN_PACK = {
    ("mass", "Answer Agent per view (optional)"): NOT_IN_PACK[("mass", "CANDIDATE_ANSWERS")],
}


@pytest.fixture(scope="module")
def recorded() -> dict[str, list]:
    """method -> the events of each of its recorded runs."""
    cases, problems = load_pack(PACK_DIR)
    assert not problems and cases
    runs: dict[str, list] = {}
    for case in cases:
        for method, entry in case.runs.items():
            runs.setdefault(method, []).append(entry.run.events)
    return runs


def test_the_pack_records_every_method(recorded):
    assert set(recorded) == set(registry())


def test_every_recorded_stage_name_is_one_its_method_or_the_runner_declares(recorded):
    for method, runs in recorded.items():
        declared = [*registry()[method].stage_names.declared().values(), *Runner.declared().values()]
        for events in runs:
            for event in events:
                assert any(names(name, event.stage) for name in declared), f"{method}: undeclared {event.stage!r}"


def test_every_declared_stage_name_is_recorded_or_said_why_not(recorded):
    for method, runs in recorded.items():
        stages = {event.stage for events in runs for event in events}
        for constant, name in registry()[method].stage_names.declared().items():
            seen = any(names(name, stage) for stage in stages)
            unseen = (method, constant) in NOT_IN_PACK
            assert seen != unseen, f"{method}.{constant} ({name}): {'recorded' if seen else 'never recorded'}"


def test_every_map_stage_holds_a_recorded_event_or_says_why_not(recorded):
    for method, runs in recorded.items():
        spec = registry()[method]
        reached = {stage_of(spec.stages, event) for events in runs for event in events}
        for stage in spec.stages:
            unseen = (method, stage.label) in STAGE_NOT_IN_PACK
            assert (stage in reached) != unseen, f"{method}: {stage.label!r}"


def test_a_map_stage_matches_only_names_its_method_declares():
    for spec in registry().values():
        declared = list(spec.stage_names.declared().values())
        assert declared, f"{spec.name} declares no stage names"
        assert len(set(map(str, declared))) == len(declared), f"{spec.name} declares a name twice"
        for stage in spec.stages:
            assert all(m in declared for m in stage.match), f"{spec.name}: {stage.label!r}"


def test_a_numbered_name_takes_a_number_and_nothing_else():
    turn = Numbered("brainstorm turn {n}")
    assert turn(12) == "brainstorm turn 12" and turn.names("brainstorm turn 12")
    assert not any(turn.names(s) for s in ("brainstorm turn", "brainstorm turn x", "brainstorm turn 1 b", "turn 1"))
    assert names("answer", "answer") and not names("answer", "answer selection")


def _bare_stage_names(source: str) -> list[int]:
    """Lines where a stage name is written as a literal: a ``stage=`` argument or the first argument of ``emit``."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if not isinstance(node, ast.Call):
            continue
        given = [k.value for k in node.keywords if k.arg == "stage"]
        if isinstance(node.func, ast.Attribute) and node.func.attr == "emit" and node.args:
            given.append(node.args[0])
        found += [v.lineno for v in given if isinstance(v, ast.JoinedStr | ast.Constant)]
        if isinstance(node.func, ast.Name) and node.func.id == "Stage" and len(node.args) > 2:
            found += [m.lineno for m in getattr(node.args[2], "elts", []) if isinstance(m, ast.Constant)]
    return found


def test_no_method_writes_a_stage_name_outside_its_declaration():
    for path in sorted(METHODS_DIR.glob("*.py")):
        assert not _bare_stage_names(path.read_text()), f"{path.name}: a literal stage name"
    assert _bare_stage_names('ctx.emit("x", a)\nf(stage=f"t {n}")\nStage("l", "c", ("p",))') == [1, 2, 3]
