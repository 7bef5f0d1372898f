"""What an evaluation runs: questions × arms. An arm is a method with its knobs, or a named ablation preset."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from core.engine.llm import LLM
from core.engine.llm.answer_formats import AnswerFormat
from core.engine.methods import get
from core.engine.retrieval.hybrid import SCORING
from core.engine.retrieval.retriever import Retriever
from core.studio.eval.mirage import BenchItem
from core.studio.eval.presets import get_preset
from core.studio.eval.results import config_key


@dataclass(frozen=True)
class Arm:
    name: str  # the method's name, or the preset's
    method: str
    params: dict[str, Any]  # the knobs given; the rest keep the paper's defaults
    preset: str = ""

    @property
    def label(self) -> str:
        return get_preset(self.preset).label if self.preset else get(self.method).label


@dataclass
class EvalPlan:
    methods: list[str]
    items: list[BenchItem]
    params: dict[str, dict[str, Any]] = field(default_factory=dict)  # method -> knobs, for it and its presets
    presets: list[str] = field(default_factory=list)

    @property
    def arms(self) -> list[Arm]:
        arms = [Arm(m, m, dict(self.params.get(m, {}))) for m in self.methods]
        for name in self.presets:
            preset = get_preset(name)
            arms.append(Arm(name, preset.method, {**self.params.get(preset.method, {}), **preset.params}, name))
        return arms

    def configs(self, llm: LLM, retriever: Retriever | None) -> dict[str, str]:
        """Each arm's configuration key; bad method names or knobs fail here, before any question runs."""
        return self.config_keys(
            llm.backend, list(retriever.corpora) if retriever is not None else [], llm.answer_format
        )

    def config_keys(self, backend: str, corpora: list[str], answer_format: AnswerFormat) -> dict[str, str]:
        """The same from the backend's name, its automatic answer format and the corpus names alone, without
        opening either. Keys hold the format that answers, so results of an automatic arm count as those of the
        format it stands for, and a change of the backend's best makes them run again."""
        keys = {}
        for arm in self.arms:
            spec = get(arm.method)
            knobs = spec.params(**arm.params).model_dump()
            knobs["answer_format"] = knobs["answer_format"] or answer_format
            retrieves = spec.uses_retrieval
            keys[arm.name] = config_key(
                arm.method, knobs, backend, corpora if retrieves else [], SCORING if retrieves else ""
            )
        return keys
