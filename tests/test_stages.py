"""Stages: every method declares its pipeline; events map to it and to the common stages Compare lines up."""

from __future__ import annotations

import json
from pathlib import Path

from core.engine.methods import get, registry
from core.engine.stages import COMMON, by_common_stage, current_stage, stage_of
from core.engine.trace import Run
from ui.runs.method_map import map_dot

DATA = Path(__file__).resolve().parent / "data"


def test_every_method_declares_its_stages_with_common_names_and_valid_loops():
    for spec in registry().values():
        assert spec.stages, f"{spec.name} declares no stages"
        labels = [s.label for s in spec.stages]
        assert len(set(labels)) == len(labels)
        for stage in spec.stages:
            assert stage.common in COMMON
            assert not stage.loop_to or stage.loop_to in labels[: labels.index(stage.label)]


def test_a_real_sema_run_maps_onto_its_stages_and_the_common_ones():
    run = Run.model_validate_json((DATA / "sema_asthma_run.json").read_text())
    spec = get("sema")
    mapped = [(e.kind, stage_of(spec.stages, e).label if stage_of(spec.stages, e) else None) for e in run.events]
    assert mapped[0] == ("agent_message", "I-Agent maps the question to a schema")
    assert ("retrieval", "E-Agent retrieves") in mapped and ("sufficiency", "E-Agent judges sufficiency") in mapped
    assert ("report", "A-Agent arbitrates the evidence") in mapped
    assert mapped[-1] == ("answer", None)  # the runner's closing event belongs to no method stage
    lanes = by_common_stage(spec.stages, run.events)
    assert list(lanes) == list(COMMON)
    assert [e.kind for e in lanes["query"]] == ["query"] * 4
    assert {e.kind for e in lanes["retrieve"]} == {"retrieval"}
    assert {e.kind for e in lanes["judge"]} == {"agent_message", "sufficiency", "verdict", "report"}
    assert [e.kind for e in lanes["answer"]] == ["agent_message", "answer"]
    assert sum(map(len, lanes.values())) == len(run.events)


def test_the_current_stage_follows_the_events_and_prefers_an_agent_at_work():
    run = Run.model_validate_json((DATA / "sema_asthma_run.json").read_text())
    stages = get("sema").stages
    assert current_stage(stages, run.events[:3]).label == "E-Agent retrieves"
    assert (
        current_stage(stages, run.events[:3], [("arbitration", "A-Agent")]).label == "A-Agent arbitrates the evidence"
    )
    assert current_stage(stages, []) is None
    # a Discuss-RAG summarizer is told apart from the experts of the same turn by its name
    discuss = get("discuss").stages
    assert current_stage(discuss, [], [("brainstorm turn 1", "Summarizer")]).label == "Summarizer folds the turn"
    assert current_stage(discuss, [], [("brainstorm turn 1", "Cardiologist")]).label == "Experts brainstorm"


def test_the_map_lights_the_current_stage_and_links_stages_with_events():
    run = Run.model_validate_json((DATA / "sema_asthma_run.json").read_text())
    spec = get("sema")
    dot = map_dot(spec, run.events[:5], lit=spec.stages[2], key="ask")
    lines = {line.split(" [")[0]: line for line in dot.splitlines() if line.startswith("s")}
    assert 'fillcolor="#0f766e"' in lines["s2"] and "penwidth=2.4" in lines["s2"]  # lit
    assert 'URL="#ask-stage-interpretation"' in lines["s0"]  # has events: a link to them
    assert "URL=" not in lines["s3"] and 'fillcolor="#f6f8f8"' in lines["s3"]  # not reached yet
    assert "s2 -> s1 [style=dashed" in dot  # the sufficiency loop goes back to retrieval
    discuss = map_dot(get("discuss"), [])
    assert 's6 -> s7 [style=dashed, label="or"]' not in discuss and 's5 -> s7 [style=dashed, label="or"]' in discuss
    json.dumps(dot)  # plain text, safe to send


def test_the_map_breaks_lines_as_graphviz_does_and_wraps_loop_labels():
    """A stage that runs several times shows that on a second line (Graphviz's own ``\\n``, not a backslash and an
    n), and a loop's long label wraps so it stays inside the drawing."""
    dot = map_dot(get("discuss"), [])
    assert 'label="Experts brainstorm\\n× n experts"' in dot
    assert "\\\\n" not in dot
    loop = next(line for line in dot.splitlines() if "constraint=false" in line)
    label = loop.split('label="', 1)[1].rsplit('"', 1)[0]
    assert label.replace("\\n", " ") == "experts review the summary (up to turns + 1 summaries)"
    assert len(label.split("\\n")) > 1 and max(len(part) for part in label.split("\\n")) <= 28
