"""``python -m core eval``: methods over MIRAGE-format questions, resumable, with a table per method × dataset."""

from __future__ import annotations

import sys
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from core import paths
from core.cli.ask import _key_value
from core.cli.interrupt import stopping_on_signals
from core.cli.knobs import knob_errors, param_value
from core.eval import BenchmarkError, EvalPlan, evaluate, load_benchmark, load_ids, select, summarize, write_results
from core.eval.report import format_table
from core.llm import LLM
from core.methods import get, registry
from core.store import RunStore

DEFAULT_METHODS = "cot,medrag,imedrag,sema"


def register(commands) -> None:
    p = commands.add_parser("eval", help="run methods over a MIRAGE-format benchmark; accuracy and cost per dataset")
    p.add_argument("--methods", default=DEFAULT_METHODS, help=f"comma-separated, from: {', '.join(registry())} "
                                                               f"(default {DEFAULT_METHODS})")
    p.add_argument("--bench", type=Path, required=True, help="benchmark .json or .json.gz: {dataset: {id: {question, "
                                                               "options, answer}}}")
    p.add_argument("--ids", type=Path, help="question ids to run, {dataset: [id, ...]} (default: every question)")
    p.add_argument("--corpus", action="extend", nargs="+", type=Path, default=[], metavar="PATH",
                   help="corpus files or folders (several, or repeat); default: the embedded corpus")
    p.add_argument("--datasets", help="comma-separated datasets (default: all in the ids file or benchmark)")
    p.add_argument("--limit", type=int, help="first N questions of each dataset")
    p.add_argument("--concurrency", type=int, default=2, help="questions in flight at once (default 2)")
    p.add_argument("--param", action="append", type=_key_value, default=[], metavar="METHOD.KNOB=VALUE",
                   help="a method knob (JSON values), e.g. sema.t_max=1 (repeat)")
    p.add_argument("--report", action="store_true", help="run nothing: print and write the table of what earlier "
                                                         "runs of the same configuration finished")
    p.add_argument("--out", type=Path, help="folder for items.csv, summary.csv, summary.json "
                                            "(default: eval/<benchmark name> in the studio folder)")
    p.set_defaults(handler=handle)


def _plan(args) -> EvalPlan:
    methods = [m.strip() for m in args.methods.split(",") if m.strip()]
    if not methods:
        raise ValueError("--methods names no method")
    for method in methods:
        get(method)
    params: dict[str, dict[str, Any]] = defaultdict(dict)
    for key, value in args.param:
        method, dot, knob = key.partition(".")
        if not dot or method not in methods:
            raise ValueError(f"--param {key}: write METHOD.KNOB=VALUE for one of the chosen methods ({', '.join(methods)})")
        params[method][knob] = param_value(value)
    for method, knobs in params.items():
        try:
            get(method).params(**knobs)
        except ValidationError as exc:
            raise ValueError(knob_errors(get(method), exc, prefix=f"{method}.")) from None
    if args.limit is not None and args.limit < 1:
        raise ValueError("--limit must be at least 1")
    if args.concurrency < 1:
        raise ValueError("--concurrency must be at least 1")
    datasets = [d.strip() for d in args.datasets.split(",")] if args.datasets else None
    items = select(load_benchmark(args.bench), load_ids(args.ids) if args.ids else None, datasets, args.limit)
    return EvalPlan(methods=methods, items=items, params=dict(params))


def handle(args) -> int:
    from tqdm import tqdm

    llm = LLM()
    try:
        plan = _plan(args)
        needs_corpus = any(get(m).uses_retrieval for m in plan.methods)
        plan.configs(llm, None)  # checks every knob before a corpus is opened
    except (BenchmarkError, ValueError, KeyError) as exc:
        print(f"error: {_message(exc)}", file=sys.stderr)
        return 2
    retriever = None
    if needs_corpus:
        from core.retrieval import CorpusError, open_retriever

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

    failed: list[dict[str, Any]] = []

    def progressed(row: dict[str, Any]) -> None:
        if row["status"] != "ok":
            failed.append(row)
        mark = "ok" if row["correct"] else ("error" if row["status"] != "ok" else "wrong")
        bar.set_postfix_str(f"{row['method']} {row['dataset']}/{row['qid']}: {mark}")
        bar.update()

    began = time.perf_counter()
    store = RunStore()
    with stopping_on_signals("the runs in flight") as stop:
        outcome = evaluate(plan, llm=llm, retriever=retriever, store=store, concurrency=args.concurrency,
                           progress=progressed, on_start=started, stop=stop.event, report_only=args.report)
    bar.close()
    summary = summarize(outcome.rows)
    print(format_table(summary) if summary else "no finished runs yet")
    out = args.out or paths.home() / "eval" / args.bench.name.split(".")[0]
    settings = {"bench": str(args.bench), "ids": str(args.ids) if args.ids else None, "methods": plan.methods,
                "params": plan.params, "model": llm.backend, "corpus": list(retriever.corpora) if retriever else [],
                "questions": len(plan.items), "ran": outcome.ran, "skipped": outcome.skipped,
                "wall_seconds": round(time.perf_counter() - began, 1)}
    written = write_results(out, outcome.rows, summary, settings)
    print(f"{outcome.ran} run(s) now, {outcome.skipped} from before, {settings['wall_seconds']:.0f}s; "
          f"results in {', '.join(str(p) for p in written)}")
    if outcome.cancelled:
        print("interrupted: run the same command again to resume", file=sys.stderr)
        return stop.exit_code
    if outcome.ran and len(failed) == outcome.ran:
        first = store.load_run(failed[0]["run_id"]).events[-1].payload
        print(f"error: all {outcome.ran} run(s) ended in an error, so nothing was scored; the first: "
              f"{getattr(first, 'message', first.kind)}", file=sys.stderr)
        return 1
    return 0


def _message(exc: Exception) -> str:
    if isinstance(exc, ValidationError):
        return "; ".join(f"{'.'.join(map(str, e['loc']))}: {e['msg']}" for e in exc.errors())
    return exc.args[0] if isinstance(exc, KeyError) else str(exc)
