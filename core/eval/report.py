"""Per method × dataset: accuracy with counts, mean cost per question, and the share of runs ending in error."""

from __future__ import annotations

import csv
import json
from collections import defaultdict
from pathlib import Path
from typing import Any

COSTS = ("calls", "retrievals", "prompt_tokens", "completion_tokens", "seconds")
ALL = "all"


def summarize(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """One line per (method, dataset) in the order rows first name them, then an ``all`` line per method
    pooling its questions (micro average)."""
    groups: dict[tuple[str, str], list[dict[str, Any]]] = defaultdict(list)
    for row in rows:
        groups[(row["method"], row["dataset"])].append(row)
        groups[(row["method"], ALL)].append(row)
    datasets = list(dict.fromkeys(r["dataset"] for r in rows))
    methods = list(dict.fromkeys(r["method"] for r in rows))
    order = [(m, d) for m in methods for d in ([*datasets, ALL] if len(datasets) > 1 else datasets)]
    return [_line(m, d, groups[(m, d)]) for m, d in order if groups[(m, d)]]


def _line(method: str, dataset: str, rows: list[dict[str, Any]]) -> dict[str, Any]:
    n = len(rows)
    correct = sum(r["correct"] for r in rows)
    errors = sum(r["status"] != "ok" for r in rows)
    line = {"method": method, "dataset": dataset, "n": n, "correct": correct, "accuracy": round(correct / n, 4),
            "errors": errors, "error_rate": round(errors / n, 4),
            "parse_errors": sum(r["error_type"] == "LLMParseError" for r in rows)}
    line.update({f"mean_{c}": round(sum(r[c] for r in rows) / n, 2) for c in COSTS})
    return line


def format_table(summary: list[dict[str, Any]]) -> str:
    header = ["method", "dataset", "accuracy", "calls", "retrievals", "prompt tok", "compl. tok", "s/question",
              "ended in error", "unparseable"]
    body = [[s["method"], s["dataset"], f"{s['accuracy']:.1%} ({s['correct']}/{s['n']})", f"{s['mean_calls']:.1f}",
             f"{s['mean_retrievals']:.1f}", f"{s['mean_prompt_tokens']:,.0f}", f"{s['mean_completion_tokens']:,.0f}",
             f"{s['mean_seconds']:.1f}", f"{s['error_rate']:.0%} ({s['errors']})",
             f"{s['parse_errors'] / s['n']:.0%} ({s['parse_errors']})"] for s in summary]
    widths = [max(len(str(r[i])) for r in [header, *body]) for i in range(len(header))]
    lines = ["  ".join(str(cell).ljust(w) if i < 2 else str(cell).rjust(w) for i, (cell, w) in enumerate(zip(r, widths)))
             for r in [header, *body]]
    return "\n".join([lines[0], "-" * len(lines[0]), *lines[1:]])


def write_results(out: Path, rows: list[dict[str, Any]], summary: list[dict[str, Any]],
                  settings: dict[str, Any]) -> list[Path]:
    """``items.csv`` (one row per method and question, with its run id), ``summary.csv`` and ``summary.json``."""
    out.mkdir(parents=True, exist_ok=True)
    written = []
    for name, table in (("items.csv", rows), ("summary.csv", summary)):
        path = out / name
        with path.open("w", newline="", encoding="utf-8") as f:
            if table:
                writer = csv.DictWriter(f, fieldnames=list(table[0]))
                writer.writeheader()
                writer.writerows(table)
        written.append(path)
    path = out / "summary.json"
    path.write_text(json.dumps({"settings": settings, "summary": summary}, indent=2), encoding="utf-8")
    return [*written, path]
