"""Saved runs to judge: teaching-pack cases × retrieval methods on the embedded model and the default corpus,
with small budgets. ``python -m benchmarks.labels_real_runs --cases stemi,dka --home /tmp/studio``

Runs go into the studio database of ``--home`` (MEDRAG_STUDIO_HOME); a (case, method) pair that already has a
finished run there is skipped, so the command can be resumed one case at a time.
"""

from __future__ import annotations

import argparse
import os
import time
from pathlib import Path

# Small budgets: every method reads a few snippets and writes short replies, so a case takes minutes on two cores.
BUDGETS: dict[str, dict] = {
    "medrag": {"k": 10, "max_doc_chars": 2000, "max_tokens": 160},
    "mass": {"k": 5, "max_doc_chars": 2000, "max_tokens": 160, "n_spans": 3},
    "sema": {"k": 5, "m": 2, "t_max": 2, "max_doc_chars": 2000, "max_tokens": 320},
    "medrgag": {
        "per_source_k": 5,
        "n_retrieved": 5,
        "n_generated": 2,
        "n_selected": 4,
        "generate_tokens": 100,
        "max_tokens": 160,
    },
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", default="stemi,dka,hyperkalaemia,meningitis", help="teaching-pack case ids")
    parser.add_argument("--methods", default=",".join(BUDGETS), help="from: " + ", ".join(BUDGETS))
    parser.add_argument("--home", type=Path, required=True, help="studio folder for the database and the LLM cache")
    args = parser.parse_args()
    os.environ["MEDRAG_STUDIO_HOME"] = str(args.home)

    from core.engine.llm import LLM
    from core.engine.retrieval import open_retriever
    from core.engine.runner import execute
    from core.engine.store import RunStore
    from core.studio.teaching import load_cases

    cases = {c.id: c for c in load_cases()}
    store = RunStore()
    done = {(r["question"], r["method"]) for r in store.list_runs(limit=10_000) if r["status"] == "ok"}
    llm, retriever = LLM(), open_retriever(None, progress=True)
    for case_id in args.cases.split(","):
        case = cases[case_id]
        for method in args.methods.split(","):
            if (case.question, method) in done:
                print(f"{case_id} {method}: done before")
                continue
            started = time.perf_counter()
            run = execute(method, case.to_question(), BUDGETS[method], llm=llm, retriever=retriever, store=store)
            print(
                f"{case_id} {method}: {run.status}, answer {run.answer.choice if run.answer else '-'} "
                f"(gold {case.answer}), {run.totals.calls} calls, {run.totals.tokens} tokens, "
                f"{time.perf_counter() - started:.0f}s, run {run.id}",
                flush=True,
            )


if __name__ == "__main__":
    main()
