"""Benchmarks: MIRAGE-format questions run through methods and ablation presets, resumable, summarised per arm ×
dataset with intervals and paired tests."""

from core.studio.eval.mirage import BenchItem, BenchmarkError, load_benchmark, load_ids, select
from core.studio.eval.plan import Arm, EvalPlan
from core.studio.eval.presets import PRESETS, Preset, get_preset
from core.studio.eval.report import summarize, write_results
from core.studio.eval.runner import evaluate

__all__ = [
    "PRESETS",
    "Arm",
    "BenchItem",
    "BenchmarkError",
    "EvalPlan",
    "Preset",
    "evaluate",
    "get_preset",
    "load_benchmark",
    "load_ids",
    "select",
    "summarize",
    "write_results",
]
