"""``python -m core claims list|check``: the papers' headline comparisons, the questions a check of one needs and
what they cost (``--dry-run``, no model called), and the check itself: both arms on the same questions, resumable,
with each arm's accuracy beside the paper's, the paired test and a verdict, written as Markdown and a run file."""

from __future__ import annotations

import json
import sys
import textwrap
from functools import partial
from pathlib import Path

from core.engine import paths
from core.engine.llm import LLM
from core.engine.methods import get
from core.engine.store import RunStore
from core.studio.claims import check_claim, check_items, claim_plan, get_claim, load_claims, sample_size
from core.studio.claims.check import per_dataset
from core.studio.claims.estimate import arm_method, estimate
from core.studio.claims.model import MIRAGE
from core.studio.claims.report import report
from core.studio.cli.interrupt import stopping_on_signals
from core.studio.cli.options import add_corpus_paths
from core.studio.eval import BenchmarkError, evaluate, load_benchmark
from core.studio.pricing import prices
from core.studio.runfiles import export_to

SHARED_BENCH = paths.REPO_ROOT.parent / "shared" / "data" / "mirage" / "benchmark.json.gz"


def register(commands) -> None:
    p = commands.add_parser("claims", help="the papers' claims: list them, size a check, check one on your model")
    actions = p.add_subparsers(dest="action", metavar="ACTION", required=True)
    actions.add_parser("list", help="every claim, its arms, datasets and the paper's effect").set_defaults(
        handler=handle_list
    )
    c = actions.add_parser("check", help="size a check (--dry-run) or run it (--n N) on the configured model")
    c.add_argument("claim", help="a claim id (see: claims list)")
    c.add_argument("--dry-run", action="store_true", help="say the questions needed and the cost; call no model")
    c.add_argument("--n", type=int, help="questions in all, spread over the datasets (default: the number needed)")
    c.add_argument(
        "--datasets", help=f"comma-separated MIRAGE subsets (default: the claim's; from {', '.join(MIRAGE)})"
    )
    c.add_argument("--bench", type=Path, help=f"the MIRAGE benchmark file (default: {SHARED_BENCH})")
    c.add_argument("--seed", type=int, default=0, help="seed of the question sample (default 0)")
    c.add_argument(
        "--discordance",
        type=float,
        help="share of questions the arms disagree on, assumed for the sample size (default: as if they erred "
        "independently, from the paper's accuracies)",
    )
    c.add_argument("--effect", type=float, help="the difference to look for, in points, where the paper gives none")
    c.add_argument("--paper-model", help="whose figures in the paper to look for (default: the first it lists)")
    add_corpus_paths(c)
    c.add_argument("--concurrency", type=int, default=2, help="questions in flight at once (default 2)")
    c.add_argument("--out", type=Path, help="folder for report.md, check.json, runs.json.gz (default: claims/<id>)")
    c.set_defaults(handler=handle_check)


def handle_list(args) -> int:
    for claim in load_claims().values():
        size = sample_size(claim)
        effect = size.effect
        figure = f"{effect.baseline:.1%} -> {effect.method:.1%}" if effect is not None and effect.cells else "see below"
        print(f"{claim.id}  [{claim.baseline} vs {claim.method}; {', '.join(claim.datasets)}]")
        print(textwrap.indent(textwrap.fill(claim.claim, 100), "    "))
        stated = "; ".join(f"{d.dataset} {'up to ' if d.up_to else ''}+{d.points:g}%" for d in claim.differences)
        print(
            f"    paper: arXiv {claim.arxiv}; {effect.model if effect else ', '.join(claim.models())}: "
            f"{figure if not stated else stated}; "
            f"questions needed: {f'{size.needed:,}' if size.needed else 'paper silent on the effect'}"
        )
    return 0


def _datasets(args, claim) -> list[str]:
    chosen = [d.strip() for d in (args.datasets or "").split(",") if d.strip()] or claim.datasets
    unknown = [d for d in chosen if d not in MIRAGE]
    if unknown:
        raise ValueError(f"--datasets: {', '.join(unknown)} are not MIRAGE subsets ({', '.join(MIRAGE)})")
    return chosen


def handle_check(args) -> int:
    try:
        claim = get_claim(args.claim)
        datasets = _datasets(args, claim)
        knobs = {
            "discordance": args.discordance,
            "effect": args.effect / 100 if args.effect is not None else None,
        }
        size = sample_size(claim, None, model=args.paper_model, datasets=datasets, **knobs)
    except (KeyError, ValueError) as exc:
        print(f"error: {exc.args[0]}", file=sys.stderr)
        return 2
    n = args.n if args.n is not None else size.needed
    if n is None or n < 1:
        print(f"{claim.id}: {claim.claim}\n\n" + "\n".join(size.lines()))
        print("error: nothing sizes the check: give --n (questions), or --effect (points)", file=sys.stderr)
        return 2
    asked = per_dataset(n, datasets) * len(datasets)
    size = sample_size(claim, asked, model=args.paper_model, datasets=datasets, **knobs)
    llm = LLM()
    store = RunStore()
    print(f"{claim.id}: {claim.claim}\n")
    print("\n".join(size.lines()))
    cost = estimate(store, claim.arms, llm.model_name, asked, prices(store))
    print(f"\nestimated cost on {llm.backend}:")
    print("\n".join(f"  {line}" for line in cost.lines()))
    if args.dry_run:
        return 0
    return _run(args, claim, datasets, asked, llm, store, knobs)


def _run(args, claim, datasets, n, llm, store, knobs) -> int:
    from tqdm import tqdm

    bench_path = args.bench or SHARED_BENCH
    try:
        items = check_items(claim, load_benchmark(bench_path), n, args.seed, datasets)
    except BenchmarkError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    plan = claim_plan(claim, items)
    retriever = None
    if any(get(arm_method(arm)).uses_retrieval for arm in claim.arms):
        from core.engine.retrieval import CorpusError, open_retriever

        try:
            retriever = open_retriever(args.corpus or None, progress=True)
        except (CorpusError, OSError) as exc:
            print(f"error: {exc}", file=sys.stderr)
            return 2
    bar = tqdm(unit="run", desc=claim.id, dynamic_ncols=True)
    run = partial(evaluate, llm=llm, retriever=retriever, store=store, concurrency=args.concurrency)
    with stopping_on_signals("the runs in flight") as stop:
        outcome = run(plan, progress=lambda _: bar.update(), on_start=lambda n, _: bar.reset(total=n), stop=stop.event)
    bar.close()
    check = check_claim(claim, outcome.rows, paper_model=args.paper_model, **knobs)
    out = args.out or paths.home() / "claims" / claim.id
    out.mkdir(parents=True, exist_ok=True)
    runs = out / "runs.json.gz"
    export_to(store, [r.run_id for r in outcome.rows], runs, title=f"claim check {claim.id}")
    (out / "check.json").write_text(json.dumps(check.as_dict(), indent=1), encoding="utf-8")
    text = report(check, claim, runs.name)
    (out / "report.md").write_text(text, encoding="utf-8")
    print("\n" + text)
    print(f"written: {out / 'report.md'}, {out / 'check.json'}, {runs}")
    if outcome.cancelled:
        print("interrupted: run the same command again to resume", file=sys.stderr)
        return stop.exit_code
    return 0
