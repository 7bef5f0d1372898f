"""``python -m core eval``: methods and ablation presets over MIRAGE-format questions, resumable, with a table per
arm × dataset (accuracy with its 95% interval, errors, cost) and the paired tests between arms."""

from __future__ import annotations

import sys
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from core.engine import paths
from core.engine.llm import LLM
from core.engine.methods import get, registry
from core.engine.store import RunStore
from core.studio.cli.interrupt import stopping_on_signals
from core.studio.cli.knobs import knob_errors, param_value
from core.studio.cli.options import add_corpus_paths, add_knobs
from core.studio.eval import (
    PRESETS,
    BenchmarkError,
    EvalPlan,
    evaluate,
    get_preset,
    load_benchmark,
    load_ids,
    select,
    summarize,
    write_results,
)
from core.studio.eval.answers import answer_shares, format_answers
from core.studio.eval.citations import citations_of
from core.studio.eval.report import ALL, format_pairs, format_table, pairwise
from core.studio.eval.results import ItemResult

DEFAULT_METHODS = "cot,medrag,imedrag,sema"


def register(commands) -> None:
    p = commands.add_parser(
        "eval",
        help="run methods and ablation presets over a MIRAGE-format benchmark; accuracy "
        "with intervals, paired tests and cost per dataset",
    )
    p.add_argument(
        "--methods",
        help=f"comma-separated, from: {', '.join(registry())} (default {DEFAULT_METHODS}, "
        "or none when --preset is given)",
    )
    p.add_argument(
        "--preset",
        action="append",
        default=[],
        metavar="NAME",
        help=f"an ablation preset, run under its name (comma-separated or repeat): {_preset_names()}",
    )
    p.add_argument(
        "--bench",
        type=Path,
        required=True,
        help="benchmark .json or .json.gz: {dataset: {id: {question, options, answer}}}",
    )
    p.add_argument("--ids", type=Path, help="question ids to run, {dataset: [id, ...]} (default: every question)")
    add_corpus_paths(p)
    p.add_argument("--datasets", help="comma-separated datasets (default: all in the ids file or benchmark)")
    p.add_argument(
        "--sample",
        type=int,
        metavar="N",
        help="a seeded random N questions of each dataset (a larger N with the same seed extends a smaller one)",
    )
    p.add_argument("--seed", type=int, default=0, help="seed for --sample (default 0)")
    p.add_argument("--limit", type=int, help="first N questions of each dataset (of the sample, if any)")
    p.add_argument("--concurrency", type=int, default=2, help="questions in flight at once (default 2)")
    add_knobs(
        p,
        "METHOD.KNOB=VALUE",
        "a method knob (JSON values), e.g. sema.t_max=1, for the method and its presets (repeat)",
    )
    p.add_argument(
        "--report",
        action="store_true",
        help="run nothing: print and write the table of what earlier runs of the same configuration finished",
    )
    p.add_argument(
        "--citations",
        action="store_true",
        help="add citation precision and recall per arm (links every finished run's claims offline: seconds a run)",
    )
    p.add_argument(
        "--out",
        type=Path,
        help="folder for items.csv, summary.csv, pairs.csv, summary.json "
        "(default: eval/<benchmark name> in the studio folder)",
    )
    p.set_defaults(handler=handle)


def _preset_names() -> str:
    names = list(PRESETS)
    grid = [n for n in names if n.startswith("imedrag-")]
    return ", ".join([n for n in names if n not in grid] + [f"{grid[0]} … {grid[-1]} (rounds × queries)"])


def _names(text: str | None) -> list[str]:
    return list(dict.fromkeys(n.strip() for n in (text or "").split(",") if n.strip()))


def _plan(args) -> EvalPlan:
    presets = _names(",".join(args.preset))
    methods = _names(args.methods if args.methods is not None or presets else DEFAULT_METHODS)
    if not methods and not presets:
        raise ValueError("--methods names no method")
    for method in methods:
        get(method)
    for preset in presets:
        get_preset(preset)
    knobbed = methods + [get_preset(p).method for p in presets]
    params: dict[str, dict[str, Any]] = defaultdict(dict)
    for key, value in args.param:
        method, dot, knob = key.partition(".")
        if not dot or method not in knobbed:
            raise ValueError(
                f"--param {key}: write METHOD.KNOB=VALUE for one of the chosen methods "
                f"({', '.join(dict.fromkeys(knobbed))})"
            )
        params[method][knob] = param_value(value)
    for method, knobs in params.items():
        try:
            get(method).params(**knobs)
        except ValidationError as exc:
            raise ValueError(knob_errors(get(method), exc, prefix=f"{method}.")) from None
    for flag in ("limit", "sample"):
        if getattr(args, flag) is not None and getattr(args, flag) < 1:
            raise ValueError(f"--{flag} must be at least 1")
    if args.concurrency < 1:
        raise ValueError("--concurrency must be at least 1")
    datasets = _names(args.datasets) or None
    items = select(
        load_benchmark(args.bench),
        load_ids(args.ids) if args.ids else None,
        datasets,
        args.limit,
        sample=args.sample,
        seed=args.seed,
    )
    if not items:
        source = f"the ids file {args.ids}" if args.ids else f"the benchmark {args.bench}"
        raise ValueError(
            f"no question is selected: {source} lists none"
            + (f" for {', '.join(datasets)}" if datasets else "")
            + "; nothing to run"
        )
    return EvalPlan(methods=methods, items=items, params=dict(params), presets=presets)


def handle(args) -> int:
    from tqdm import tqdm

    llm = LLM()
    try:
        plan = _plan(args)
        needs_corpus = any(get(arm.method).uses_retrieval for arm in plan.arms)
        plan.configs(llm, None)  # checks every knob before a corpus is opened
    except (BenchmarkError, ValueError, KeyError) as exc:
        print(f"error: {_message(exc)}", file=sys.stderr)
        return 2
    retriever = None
    if needs_corpus:
        from core.engine.retrieval import CorpusError, open_retriever

        try:
            retriever = open_retriever(args.corpus or None, progress=True)
        except (CorpusError, OSError) as exc:
            print(f"error: {exc}", file=sys.stderr)
            return 2
    bar = tqdm(unit="run", desc="eval", dynamic_ncols=True)

    def started(pending: int, skipped: int) -> None:
        bar.reset(total=pending)
        if skipped:
            bar.write(f"resuming: {skipped} finished run(s) skipped")

    failed: list[ItemResult] = []

    def progressed(row: ItemResult) -> None:
        if row.status != "ok":
            failed.append(row)
        mark = "ok" if row.correct else ("error" if row.status != "ok" else "wrong")
        bar.set_postfix_str(f"{row.arm} {row.dataset}/{row.qid}: {mark}")
        bar.update()

    began = time.perf_counter()
    store = RunStore()
    with stopping_on_signals("the runs in flight") as stop:
        outcome = evaluate(
            plan,
            llm=llm,
            retriever=retriever,
            store=store,
            concurrency=args.concurrency,
            progress=progressed,
            on_start=started,
            stop=stop.event,
            report_only=args.report,
        )
    bar.close()
    citations = citations_of(store, [r.run_id for r in outcome.rows]) if args.citations else None
    summary = summarize(outcome.rows, citations)
    print(format_table(summary) if summary else "no finished runs yet")
    if len(plan.arms) > 1 and summary:
        print(f"\npaired comparison over {len(plan.arms)} arms (all datasets pooled):")
        print(format_pairs(pairwise(outcome.rows)[ALL]))
    if summary:
        print("\noptions chosen / right, per dataset (Stuart–Maxwell test that they share one distribution):")
        print(format_answers(answer_shares(outcome.rows)))
    out = args.out or paths.home() / "eval" / args.bench.name.split(".")[0]
    settings = {
        "bench": str(args.bench),
        "ids": str(args.ids) if args.ids else None,
        "methods": plan.methods,
        "presets": plan.presets,
        "sample": args.sample,
        "seed": args.seed,
        "params": plan.params,
        "model": llm.backend,
        "corpus": list(retriever.corpora) if retriever else [],
        "questions": len(plan.items),
        "ran": outcome.ran,
        "skipped": outcome.skipped,
        "wall_seconds": round(time.perf_counter() - began, 1),
    }
    written = write_results(out, outcome.rows, summary, settings)
    print(
        f"{outcome.ran} run(s) now, {outcome.skipped} from before, {settings['wall_seconds']:.0f}s; "
        f"results in {', '.join(str(p) for p in written)}"
    )
    if outcome.cancelled:
        print("interrupted: run the same command again to resume", file=sys.stderr)
        return stop.exit_code
    if outcome.ran and len(failed) == outcome.ran:
        first = store.load_run(failed[0].run_id).events[-1].payload
        print(
            f"error: all {outcome.ran} run(s) ended in an error, so nothing was scored; the first: "
            f"{getattr(first, 'message', first.kind)}",
            file=sys.stderr,
        )
        return 1
    return 0


def _message(exc: Exception) -> str:
    if isinstance(exc, ValidationError):
        return "; ".join(f"{'.'.join(map(str, e['loc']))}: {e['msg']}" for e in exc.errors())
    return exc.args[0] if isinstance(exc, KeyError) else str(exc)
