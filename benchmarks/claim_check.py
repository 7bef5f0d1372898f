"""One paper's claim checked end to end on the configured model (the embedded one by default) within a time budget:

    .venv/bin/python -m benchmarks.claim_check --claim medrag-vs-cot --datasets mmlu \\
        --corpus ../shared/data/corpora/openstax_anatomy_physiology_2e.jsonl.gz \\
                 ../shared/data/corpora/openstax_microbiology.jsonl.gz --minutes 15

The claim's two arms run on a seeded sample of its datasets (every arm on a question before the next question, so a
stop leaves them paired), and the runs are stopped when the budget is spent: the check's n is then the largest that
fitted. The check, its report, the questions the power calculation asked for and the wall time go to
``benchmarks/results/claims.json``, from which ``python -m tools.docs`` draws docs/claims.md; every question's run
goes to a run file beside it.
"""

from __future__ import annotations

import argparse
import json
import sys
import threading
import time
from pathlib import Path

from core.engine.llm import LLM
from core.engine.llm.speed import measured
from core.engine.paths import REPO_ROOT
from core.engine.retrieval import open_retriever
from core.engine.store import RunStore
from core.studio.claims import check_claim, check_items, claim_plan, get_claim, sample_size
from core.studio.claims.estimate import arm_method
from core.studio.claims.report import NOT_THE_PAPERS_MODEL, check_markdown, claim_markdown
from core.studio.cli.claims import SHARED_BENCH
from core.studio.eval import evaluate, load_benchmark
from core.studio.runfiles import export_to

RESULTS = REPO_ROOT / "benchmarks" / "results" / "claims.json"
RUNS = REPO_ROOT / "benchmarks" / "results" / "claims_runs.json.gz"


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m benchmarks.claim_check", description=__doc__.split("\n\n")[0])
    p.add_argument("--claim", default="medrag-vs-cot")
    p.add_argument("--datasets", default="mmlu")
    p.add_argument("--corpus", nargs="+", type=Path, default=[])
    p.add_argument("--bench", type=Path, default=SHARED_BENCH)
    p.add_argument("--minutes", type=float, default=15.0, help="the time budget for the runs (not the index build)")
    p.add_argument("--most", type=int, default=400, help="questions planned; the budget stops the runs before")
    p.add_argument("--concurrency", type=int, default=2)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument(
        "--report", action="store_true", help="run nothing: the check again from the runs stored (as eval --report)"
    )
    args = p.parse_args(argv)
    claim = get_claim(args.claim)
    datasets = args.datasets.split(",")
    needed = sample_size(claim, datasets=datasets).needed
    items = check_items(claim, load_benchmark(args.bench), args.most, args.seed, datasets)
    llm, store = LLM(), RunStore()
    retriever = open_retriever(args.corpus or None, progress=True)
    stop = threading.Event()
    timer = threading.Timer(args.minutes * 60, stop.set)
    began = time.perf_counter()
    timer.start()
    try:
        outcome = evaluate(
            claim_plan(claim, items),
            llm=llm,
            retriever=retriever,
            store=store,
            concurrency=args.concurrency,
            stop=stop,
            report_only=args.report,
        )
    finally:
        timer.cancel()
    before = json.loads(RESULTS.read_text()) if args.report else {}  # a report keeps the measurement's own facts
    wall = before.get("wall_seconds", time.perf_counter() - began)
    check = check_claim(claim, outcome.rows)
    export_to(store, [r.run_id for r in outcome.rows], RUNS, title=f"claim check {claim.id}")
    data = {
        "claim": claim.id,
        "datasets": datasets,
        "corpus": [path.name for path in args.corpus],
        "minutes": args.minutes,
        "concurrency": args.concurrency,
        "wall_seconds": round(wall, 1),
        "needed": needed,
        # both arms' seconds a question on an idle machine, as measured (data/measured_speed.json)
        "idle_seconds": sum(measured().methods[arm_method(arm)].median_seconds or 0 for arm in claim.arms),
        "command": before.get(
            "command", "python -m benchmarks.claim_check " + " ".join(argv if argv is not None else sys.argv[1:])
        ),
        "check": check.as_dict(),
        "report": check_markdown(check, claim),
        "claim_text": claim_markdown(claim),
        "at": before.get("at", time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime())),
    }
    RESULTS.write_text(json.dumps(data, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    print(data["report"])
    print(f"{check.n} questions paired in {wall:.0f} s; the power calculation asked for {needed}")
    return 0


def page(data: dict) -> str:
    """docs/claims.md: how to check a claim, then the one checked here and what it showed."""
    c = data["check"]
    return f"""# Checking a paper's claim on your own model

<!-- Generated from benchmarks/results/claims.json by `python -m tools.docs`; do not edit.
Reproduce with `python -m benchmarks.claim_check` (see its docstring). -->

The papers this studio implements each report a headline comparison ("SEMA-RAG beats i-MedRAG", "MedRAG beats
chain-of-thought"). Each is a record in `data/claims/claims.json`: the claim in one sentence, its two arms as the
studio's methods or presets, the MIRAGE subsets a check runs, the table cells the paper reports (model, dataset,
arm, accuracy), and the corpus, k and retriever it used, with "paper silent" wherever the paper (as the studio's
summaries of it have it) does not say.

```
python -m core claims list                          # every claim, its arms and the paper's effect
python -m core claims check sema-vs-imedrag --dry-run   # questions needed, what n can detect, tokens, time, money
python -m core claims check medrag-vs-cot --datasets mmlu --n 30   # run it (resumable), report + run file
```

The Benchmark page offers the same under **Check a paper's claim**.

## How many questions

A check is a paired test: both arms answer the same questions, and McNemar's test counts the questions on which one
was right and the other wrong. The questions it needs for 80% power at alpha 0.05 come from Connor's formula
(Biometrics 1987) with the paper's two accuracies and an assumed share of questions on which the arms disagree: by
default the share they would disagree on if they erred independently, which overstates it (two methods on one
model miss many of the same questions), so the number errs high. `--discordance` sets another share, `--effect`
an effect where the paper gives none. A paper that states only an improvement ("up to 16.67%") is sized as if its
accuracies sat either side of 50%, which needs the most questions. The dry run also says the smallest difference
the chosen n can detect, and the tokens, seconds and money it will cost from the method's recorded runs and the
prices in Settings.

## The verdict

Each arm's accuracy with its Wilson 95% interval beside the paper's figure; the paired difference with its 95%
interval (Agresti–Min) and the exact McNemar p; then one of: **consistent with the paper** (p < 0.05, same
direction), **the opposite of the paper** (p < 0.05, other direction), **not enough questions to tell** (with the
n needed), or, when the n needed was reached and nothing showed, **smaller than the paper's effect**. Beside it,
what differs from the paper's setup: model, corpus, k, retriever.

## Checked here

{NOT_THE_PAPERS_MODEL}

The claim **{data["claim"]}** on MIRAGE's {", ".join(data["datasets"])}, the corpora {", ".join(data["corpus"])}
(the shared OpenStax textbooks, not MedRAG's MedCorp), {data["concurrency"]} questions at once on two cores, a
budget of {data["minutes"]:g} minutes: **{c["n"]} questions paired** in {data["wall_seconds"]:.0f} s. {_against_needed(c["n"], data["needed"])}
That is {data["wall_seconds"] / c["n"]:.0f} s a question for both arms; the pace `data/measured_speed.json` records
on an idle machine (the one it was measured on, not necessarily this one) is {data["idle_seconds"]:.0f} s.

### The claim

{data["claim_text"].strip()}

### What it showed

{data["report"].strip()}

Every question's run is in `benchmarks/results/claims_runs.json.gz` (a run file: `python -m core runs import`).
Measured {data["at"]} UTC.
"""


def _against_needed(n: int, needed: int) -> str:
    if n >= needed:
        return f"The power calculation asked for {needed:,}: all of them were run."
    return f"The power calculation asked for {needed:,}; {n} is the largest n that fitted the budget."


if __name__ == "__main__":
    raise SystemExit(main())
