"""``python -m core workshop record``: record the workshop pack (teaching cases × methods), resumable."""

from __future__ import annotations

import sys
from pathlib import Path

from tqdm import tqdm

from core.engine.methods import registry
from core.studio.cli.interrupt import stopping_on_signals
from core.studio.teaching import TeachingPackError, load_cases
from core.studio.workshop import pack


def register(commands) -> None:
    p = commands.add_parser("workshop", help="the recorded workshop pack")
    actions = p.add_subparsers(dest="action", metavar="ACTION", required=True)
    rec = actions.add_parser(
        "record",
        help="record teaching cases × methods on the embedded model and the default "
        "corpus into data/workshop_pack (resumable: only what is missing runs)",
    )
    rec.add_argument(
        "--cases",
        default="all",
        help="'all' (default), a number N for the first N teaching cases, or comma-separated case ids",
    )
    rec.add_argument(
        "--methods", default="all", help=f"'all' (default) or comma-separated, from: {', '.join(registry())}"
    )
    rec.add_argument("--retry-errors", action="store_true", help="record again the runs that ended in an error")
    rec.add_argument(
        "--again",
        action="store_true",
        help="record the chosen cases × methods again even where they "
        "are recorded (after a method changed); each is replaced "
        "when its new run ends",
    )
    rec.add_argument("--status", action="store_true", help="record nothing: show what is recorded and what is missing")
    rec.add_argument("--pack", type=Path, help=f"pack folder (default {pack.PACK_DIR}, or MEDRAG_WORKSHOP_PACK)")
    rec.set_defaults(handler=handle_record)


def _choose(args):
    cases = load_cases()
    by_id = {c.id: c for c in cases}
    if args.cases != "all":
        if args.cases.isdigit():
            cases = cases[: int(args.cases)]
        else:
            wanted = [c.strip() for c in args.cases.split(",") if c.strip()]
            unknown = [c for c in wanted if c not in by_id]
            if unknown:
                raise ValueError(f"no teaching case has the id {', '.join(unknown)}; the cases are: {', '.join(by_id)}")
            cases = [by_id[c] for c in wanted]
    methods = list(registry()) if args.methods == "all" else [m.strip() for m in args.methods.split(",") if m.strip()]
    unknown = [m for m in methods if m not in registry()]
    if unknown or not methods or not cases:
        raise ValueError(
            f"choose methods from: {', '.join(registry())}" if unknown or not methods else "--cases chose no case"
        )
    return cases, methods


def handle_record(args) -> int:
    try:
        cases, methods = _choose(args)
    except (ValueError, TeachingPackError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    if args.status:
        print(pack.status_table(cases, methods, args.pack))
        return 0
    from core.engine.llm import LLM
    from core.engine.retrieval import open_retriever

    llm = LLM()  # the embedded model
    retriever = open_retriever(None, progress=True)  # the default corpus
    bar = tqdm(total=0, desc="recording", unit=" run")
    current = {"label": "", "events": 0}

    def planned(pairs) -> None:
        bar.reset(total=len(pairs))
        bar.write(
            f"{len(pairs)} runs to record"
            + (
                ": " + ", ".join(f"{c.id}/{m}" for c, m in pairs)
                if pairs
                else "; the pack already holds everything asked for"
            )
        )

    def starting(case, method) -> None:
        current.update(label=f"{case.id} · {method}", events=0)
        bar.set_postfix_str(current["label"])

    def event(_) -> None:
        current["events"] += 1
        bar.set_postfix_str(f"{current['label']} · {current['events']} events")

    def finished(case, run) -> None:
        answer = run.answer.choice if run.answer else "-"
        bar.write(
            f"{case.id}/{run.method}: {run.status}, answer {answer} (key {case.answer}), {len(run.events)} events, "
            f"{run.totals.seconds:.0f} s"
        )
        bar.update(1)

    with stopping_on_signals("the recording") as stop:
        pack.record(
            cases,
            methods,
            llm=llm,
            retriever=retriever,
            folder=args.pack,
            retry_errors=args.retry_errors,
            again=args.again,
            sinks=[event],
            on_plan=planned,
            on_start=starting,
            on_done=finished,
            cancel=stop.event,
        )
    bar.close()
    if stop.event.is_set():
        print(
            "stopped; the run in flight is not saved, what finished is; the same command records the rest",
            file=sys.stderr,
        )
        print(pack.status_table(cases, methods, args.pack))
        return stop.exit_code
    print(pack.status_table(cases, methods, args.pack))
    return 0
