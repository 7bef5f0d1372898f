"""Oracle benchmark: how much does the right evidence lift the answer on the teaching pack?

    .venv/bin/python -m benchmarks.oracle_bench [--cases N] [--arms cot,medrag,medrag-options,oracle] [--report]

Each teaching case's question answered on the embedded model by
- ``cot``: no documents;
- ``medrag``: MedRAG as shipped (the default corpus, the question searched);
- ``medrag-options``: MedRAG searching the question with its options;
- ``oracle``: MedRAG's reader given exactly the case's key passages (the evidence its author wrote for it).
The gap between ``oracle`` and ``cot`` is what perfect retrieval could add on this model; the gap between
``oracle`` and ``medrag`` what retrieval loses. Accuracy with 95% Wilson intervals, pairs by exact McNemar.
Runs go through the response cache (greedy calls replay), and each finished run is saved at once in
``benchmarks/results/oracle_bench.json``, so the benchmark runs in pieces and ``--report`` only prints.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from tqdm import tqdm

from core.engine.paths import REPO_ROOT
from core.engine.runner import execute
from core.engine.trace import Hit
from core.studio.eval.stats import mcnemar, wilson
from core.studio.teaching import TeachingCase, load_cases, load_passages

RESULTS = REPO_ROOT / "benchmarks" / "results" / "oracle_bench.json"
ARMS = {
    "cot": ("cot", {}),
    "medrag": ("medrag", {}),
    "medrag-options": ("medrag", {"query": "question and options"}),
    "oracle": ("medrag", {}),
}


class OracleRetriever:
    """Returns the case's key passages, in the pack's order, whatever the query."""

    def __init__(self, passages: list[Hit]):
        self.passages = passages
        self.corpora = sorted({h.corpus for h in passages})

    def search(self, query: str, k: int, **_: object) -> list[Hit]:
        return self.passages[:k]

    def similarity(self, query: str, texts: list[str]) -> list[float]:
        return [1.0] * len(texts)


def key_hits(case: TeachingCase, by_id: dict) -> list[Hit]:
    return [
        Hit(snippet_id=pid, corpus="teaching", title=by_id[pid].title, text=by_id[pid].content, rank=rank, score=1.0)
        for rank, pid in enumerate(case.key_passages, 1)
    ]


def load(path: Path) -> dict:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError):
        return {}


def run_arms(cases: list[TeachingCase], arms: list[str], path: Path, llm=None, retriever=None) -> None:
    """Runs what ``path`` does not hold yet; by default on the embedded model (response cache on: greedy calls that
    ran before replay) and the default corpus."""
    from core.engine.llm import LLM
    from core.engine.retrieval import open_retriever

    llm = llm or LLM()
    if retriever is None and {"medrag", "medrag-options"} & set(arms):
        retriever = open_retriever(None, progress=True)
    by_id = {p.id: p for p in load_passages()}
    results = load(path)
    todo = [(c, a) for c in cases for a in arms if a not in results.get(c.id, {})]
    for case, arm in tqdm(todo, desc="oracle bench", unit="run"):
        method, params = ARMS[arm]
        source = OracleRetriever(key_hits(case, by_id)) if arm == "oracle" else retriever
        run = execute(method, case.to_question(), params, llm=llm, retriever=source)
        choice = run.answer.choice if run.answer else None
        results.setdefault(case.id, {})[arm] = {
            "status": run.status,
            "choice": choice,
            "correct": choice == case.answer,
            "seconds": run.totals.seconds,
            "cached": run.totals.cached,
        }
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(results, indent=1, sort_keys=True), encoding="utf-8")


def report(cases: list[TeachingCase], arms: list[str], results: dict) -> str:
    lines = ["| arm | correct | n | accuracy | 95% interval |", "| --- | ---: | ---: | ---: | --- |"]
    outcomes = {a: {c.id: results[c.id][a]["correct"] for c in cases if a in results.get(c.id, {})} for a in arms}
    for arm, got in outcomes.items():
        n, correct = len(got), sum(got.values())
        ci = wilson(correct, n)
        shown = f"{ci[0]:.2f}–{ci[1]:.2f}" if ci else "—"
        lines.append(
            f"| {arm} | {correct} | {n} | {correct / n:.2f} | {shown} |" if n else f"| {arm} | 0 | 0 | — | — |"
        )
    lines += ["", "| pair | n | first only | second only | exact McNemar p |", "| --- | ---: | ---: | ---: | ---: |"]
    for i, first in enumerate(arms):
        for second in arms[i + 1 :]:
            common = sorted(outcomes[first].keys() & outcomes[second].keys())
            if common:
                b, c, p = mcnemar([outcomes[first][k] for k in common], [outcomes[second][k] for k in common])
                lines.append(f"| {first} vs {second} | {len(common)} | {b} | {c} | {p:.3f} |")
    return "\n".join(lines)


def markdown(results: dict) -> str:
    """The results file as docs/results/oracle_bench.md shows it: every arm on the cases it ran."""
    cases = [c for c in load_cases() if c.id in results]
    arms = [a for a in ARMS if any(a in results[c.id] for c in cases)]
    return (
        f"The {len(cases)} teaching cases on the embedded model; Wilson 95% intervals; pairs on the cases both "
        "arms ran (exact McNemar).\n\n" + report(cases, arms, results)
    )


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--cases", type=int, default=0, help="the first N teaching cases (default: all)")
    ap.add_argument("--arms", default=",".join(ARMS), help=f"comma-separated, from: {', '.join(ARMS)}")
    ap.add_argument("--report", action="store_true", help="run nothing: print the table of what is finished")
    ap.add_argument("--results", type=Path, default=RESULTS)
    args = ap.parse_args(argv)
    arms = [a.strip() for a in args.arms.split(",") if a.strip()]
    if unknown := [a for a in arms if a not in ARMS]:
        ap.error(f"unknown arm(s) {', '.join(unknown)}; choose from {', '.join(ARMS)}")
    cases = load_cases()
    cases = cases[: args.cases] if args.cases else cases
    if not args.report:
        run_arms(cases, arms, args.results)
    print(report(cases, arms, load(args.results)))


if __name__ == "__main__":
    main()
