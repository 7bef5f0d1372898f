"""Benchmarks: MIRAGE-format questions run through the methods, resumable, summarised per method × dataset."""

from core.eval.mirage import BenchItem, BenchmarkError, load_benchmark, load_ids, select
from core.eval.report import summarize, write_results
from core.eval.runner import EvalPlan, evaluate

__all__ = ["BenchItem", "BenchmarkError", "EvalPlan", "evaluate", "load_benchmark", "load_ids", "select",
           "summarize", "write_results"]
