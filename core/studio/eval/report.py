"""Per arm × dataset: accuracy with its Wilson 95% interval and counts, errors, mean cost per question; and the
paired McNemar table between arms. The command line prints these and writes them as CSV and JSON; the page
draws the same numbers."""

from __future__ import annotations

import csv
import json
from collections import defaultdict
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from core.studio.eval.answers import answer_shares
from core.studio.eval.citations import CITATION_NOTE, CitationCounts, citation_columns
from core.studio.eval.results import COSTS, ItemResult
from core.studio.eval.stats import LEVEL, Paired, overall_reading, pairs, wilson

ALL = "all"
ACCURACY_NOTE = (
    f"accuracy = correct answers over all questions asked; a run that ended in error counts as not "
    f"correct and is counted under 'errors'. {LEVEL:.0%} CI: Wilson score interval. Pairs: exact McNemar "
    "test on the questions both arms finished."
)


def summarize(rows: list[ItemResult], citations: Mapping[str, CitationCounts] | None = None) -> list[dict[str, Any]]:
    """One line per (arm, dataset) in the order rows first name them, then an ``all`` line per arm pooling its
    questions (micro average); with ``citations`` (by run id), each line's citation precision and recall too."""
    groups: dict[tuple[str, str], list[ItemResult]] = defaultdict(list)
    for row in rows:
        groups[(row.arm, row.dataset)].append(row)
        groups[(row.arm, ALL)].append(row)
    datasets = list(dict.fromkeys(r.dataset for r in rows))
    arms = list(dict.fromkeys(r.arm for r in rows))
    order = [(a, d) for a in arms for d in ([*datasets, ALL] if len(datasets) > 1 else datasets)]
    return [_line(a, d, groups[(a, d)], citations) for a, d in order if groups[(a, d)]]


def _line(
    arm: str, dataset: str, rows: list[ItemResult], citations: Mapping[str, CitationCounts] | None = None
) -> dict[str, Any]:
    n = len(rows)
    correct = sum(r.correct for r in rows)
    errors = sum(r.status != "ok" for r in rows)
    low, high = wilson(correct, n)
    line = {
        "arm": arm,
        "method": rows[0].method,
        "preset": rows[0].preset or "",
        "dataset": dataset,
        "n": n,
        "correct": correct,
        "accuracy": round(correct / n, 4),
        "ci_low": round(low, 4),
        "ci_high": round(high, 4),
        "errors": errors,
        "error_rate": round(errors / n, 4),
        "parse_errors": sum(r.error_type == "LLMParseError" for r in rows),
    }
    line.update({f"mean_{c}": round(sum(getattr(r, c) for r in rows) / n, 2) for c in COSTS})
    line["mean_tokens"] = round(line["mean_prompt_tokens"] + line["mean_completion_tokens"], 2)
    if citations is not None:
        line.update(citation_columns(sum((citations.get(r.run_id, CitationCounts()) for r in rows), CitationCounts())))
    return line


def pairwise(rows: list[ItemResult]) -> dict[str, list[Paired]]:
    """The paired tests pooled over every dataset (``all``), and per dataset when there are several."""
    datasets = list(dict.fromkeys(r.dataset for r in rows))
    out = {ALL: pairs(rows)}
    if len(datasets) > 1:
        out.update({d: pairs([r for r in rows if r.dataset == d]) for d in datasets})
    return out


def _columns(header: list[str], body: list[list[str]], left: int) -> list[str]:
    widths = [max(len(str(r[i])) for r in [header, *body]) for i in range(len(header))]
    lines = [
        "  ".join(str(cell).ljust(w) if i < left else str(cell).rjust(w) for i, (cell, w) in enumerate(zip(r, widths)))
        for r in [header, *body]
    ]
    return [lines[0], "-" * len(lines[0]), *lines[1:]]


def format_table(summary: list[dict[str, Any]]) -> str:
    header = [
        "arm",
        "dataset",
        "accuracy",
        f"{LEVEL:.0%} CI",
        "errors",
        "unparseable",
        "calls",
        "retrievals",
        "prompt tok",
        "compl. tok",
        "s/question",
    ]
    cites = bool(summary) and "citation_recall" in summary[0]
    header += ["citation precision", "citation recall"] if cites else []
    body = [
        [
            s["arm"],
            s["dataset"],
            f"{s['accuracy']:.1%} ({s['correct']}/{s['n']})",
            f"{s['ci_low']:.1%}–{s['ci_high']:.1%}",
            f"{s['error_rate']:.0%} ({s['errors']})",
            f"{s['parse_errors'] / s['n']:.0%} ({s['parse_errors']})",
            f"{s['mean_calls']:.1f}",
            f"{s['mean_retrievals']:.1f}",
            f"{s['mean_prompt_tokens']:,.0f}",
            f"{s['mean_completion_tokens']:,.0f}",
            f"{s['mean_seconds']:.1f}",
            *([rate_text(s, "citation_precision"), rate_text(s, "citation_recall")] if cites else []),
        ]
        for s in summary
    ]
    return "\n".join([*_columns(header, body, left=2), ACCURACY_NOTE, *([CITATION_NOTE] if cites else [])])


def rate_text(line: dict[str, Any], name: str) -> str:
    """A citation rate with its interval, or a dash where there was nothing to count."""
    if line[name] is None:
        return "–"
    return f"{line[name]:.0%} ({line[f'{name}_low']:.0%}–{line[f'{name}_high']:.0%})"


def format_pairs(found: list[Paired], label: Callable[[str], str] = str) -> str:
    """The pairwise table and its one-line reading."""
    if not found:
        return overall_reading(found, label)
    header = ["first", "second", "questions", "b: first only", "c: second only", "McNemar p", "agree", "same answer"]
    body = [
        [
            label(p.first),
            label(p.second),
            str(p.n),
            str(p.b),
            str(p.c),
            f"{p.p:.3f}",
            f"{p.agreement:.0%}",
            f"{p.same_answer:.0%}",
        ]
        for p in found
    ]
    return "\n".join([*_columns(header, body, left=2), overall_reading(found, label)])


def _csv(path: Path, table: list[dict[str, Any]]) -> Path:
    with path.open("w", newline="", encoding="utf-8") as f:
        if table:
            writer = csv.DictWriter(f, fieldnames=list(table[0]))
            writer.writeheader()
            writer.writerows(table)
    return path


def write_results(
    out: Path, rows: list[ItemResult], summary: list[dict[str, Any]], settings: dict[str, Any]
) -> list[Path]:
    """``items.csv`` (one row per arm and question, with its run id), ``summary.csv`` (with the intervals),
    ``pairs.csv`` (the paired tests, pooled and per dataset) and ``summary.json`` (all of it, the options each arm
    chose against the right ones, and the settings)."""
    out.mkdir(parents=True, exist_ok=True)
    tests = pairwise(rows)
    pair_rows = [{"dataset": d, **p.as_dict()} for d, found in tests.items() for p in found]
    items = [r.as_dict() for r in rows]
    written = [_csv(out / "items.csv", items), _csv(out / "summary.csv", summary), _csv(out / "pairs.csv", pair_rows)]
    path = out / "summary.json"
    answers = [a.as_dict() for a in answer_shares(rows)]
    path.write_text(
        json.dumps(
            {
                "settings": settings,
                "note": ACCURACY_NOTE,
                "summary": summary,
                "pairs": pair_rows,
                "reading": overall_reading(tests[ALL]),
                "answers": answers,
            },
            indent=2,
        ),
        encoding="utf-8",
    )
    return [*written, path]
