"""Ablation presets from the methods' papers: named configurations, run and stored under their names.

A preset is a method and the knobs that differ from its paper's defaults; every other knob keeps its default
(or the value given for that method, e.g. a smaller ``k`` for a whole i-MedRAG grid).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from core.engine.methods.mass import VIEWS


@dataclass(frozen=True)
class Preset:
    name: str  # what the command line and the results call it, e.g. "sema-no-e"
    method: str
    params: dict[str, Any]
    label: str  # shown to users
    group: str  # the ablation it belongs to; the page offers each group as one click


def _presets() -> list[Preset]:
    sema = "SEMA-RAG without one agent"
    discuss = "Discuss-RAG without one stage"
    medrgag = "MedRGAG without one module"
    mass = "MASS-RAG with one view"
    grid = "i-MedRAG rounds × queries"
    query = "MedRAG's search query"
    return [
        Preset("sema-no-i", "sema", {"use_i_agent": False}, "SEMA-RAG w/o I-Agent", sema),
        Preset("sema-no-e", "sema", {"use_e_agent": False}, "SEMA-RAG w/o E-Agent", sema),
        Preset("sema-no-a", "sema", {"use_a_agent": False}, "SEMA-RAG w/o A-Agent", sema),
        Preset("discuss-no-brainstorm", "discuss", {"brainstorm": False}, "Discuss-RAG w/o brainstorming", discuss),
        Preset("discuss-no-verify", "discuss", {"verify": False}, "Discuss-RAG w/o verification", discuss),
        Preset("medrgag-no-kgcc", "medrgag", {"kgcc": False}, "MedRGAG w/o KGCC", medrgag),
        Preset("medrgag-no-kads", "medrgag", {"kads": False}, "MedRGAG w/o KADS", medrgag),
        Preset(
            "medrag-options-query", "medrag", {"query": "question and options"}, "MedRAG, options searched too", query
        ),
        *[Preset(f"mass-{view}", "mass", {"views": [view]}, f"MASS-RAG {view} only", mass) for view in VIEWS],
        *[
            Preset(
                f"imedrag-r{r}q{q}",
                "imedrag",
                {"rounds": r, "queries": q},
                f"i-MedRAG {r} round(s) × {q} quer{'y' if q == 1 else 'ies'}",
                grid,
            )
            for r in range(1, 5)
            for q in range(1, 4)
        ],
    ]


PRESETS: dict[str, Preset] = {p.name: p for p in _presets()}


def groups() -> dict[str, list[Preset]]:
    out: dict[str, list[Preset]] = {}
    for preset in PRESETS.values():
        out.setdefault(preset.group, []).append(preset)
    return out


def get_preset(name: str) -> Preset:
    if name not in PRESETS:
        raise KeyError(f"unknown preset {name!r}; choose one of: {', '.join(PRESETS)}")
    return PRESETS[name]
