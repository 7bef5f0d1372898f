"""``python -m core ask``: one method on one question, events streamed as they happen."""

from __future__ import annotations

import sys

from pydantic import ValidationError

from core.engine.llm import LLM
from core.engine.methods import get, registry
from core.engine.question import Question
from core.engine.runner import execute
from core.engine.store import RunStore
from core.studio.cli.interrupt import stopping_on_signals
from core.studio.cli.knobs import knob_errors, param_value
from core.studio.cli.options import add_corpus_paths, add_knobs, key_value
from core.studio.cli.render import describe, totals_line
from core.studio.pricing import prices, run_cost


def register(commands) -> None:
    p = commands.add_parser("ask", help="ask one question with one method and stream its trace")
    p.add_argument("question", help="the question text")
    p.add_argument(
        "--option",
        action="append",
        type=key_value,
        default=[],
        metavar='A="text"',
        help="a multiple-choice option (repeat for each)",
    )
    p.add_argument("--method", default="cot", help=f"one of: {', '.join(registry())}")
    add_knobs(p, "KNOB=VALUE", "a method knob (JSON values, e.g. rounds=2)")
    add_corpus_paths(p)
    p.add_argument("--json", action="store_true", help="print the whole run as JSON at the end")
    p.set_defaults(handler=handle)


def _options(pairs: list[tuple[str, str]]) -> dict[str, str]:
    options: dict[str, str] = {}
    for letter, text in pairs:
        if letter.strip() in options:
            raise ValueError(
                f"--option {letter.strip()} is given twice ({options[letter.strip()]!r} and {text!r}); "
                "give each letter once"
            )
        options[letter.strip()] = text
    return options


def handle(args) -> int:
    try:
        spec = get(args.method)
        question = Question(text=args.question, options=_options(args.option))
    except KeyError as exc:
        return _error(exc.args[0])
    except ValidationError as exc:
        return _error("; ".join(e["msg"].removeprefix("Value error, ") for e in exc.errors()))
    except ValueError as exc:
        return _error(str(exc))
    try:
        params = spec.params(**{k: param_value(v) for k, v in args.param})
    except ValidationError as exc:
        return _error(knob_errors(spec, exc))
    retriever = None
    if spec.uses_retrieval:
        from core.engine.retrieval import CorpusError, open_retriever

        try:
            retriever = open_retriever(args.corpus or None, progress=True)
        except (CorpusError, OSError) as exc:
            return _error(str(exc))
    llm, store = LLM(), RunStore()
    with stopping_on_signals("the run") as stop:
        run = execute(
            spec.name,
            question,
            params.model_dump(),
            llm=llm,
            retriever=retriever,
            store=store,
            sinks=[lambda event: print(describe(event), flush=True)],
            cancel=stop.event,
        )
    print(totals_line(run))
    if (cost := run_cost(run, prices(store))).state == "priced":
        print(f"cost: {cost.basis()}")
    if args.json:
        print(run.model_dump_json(indent=2))
    if run.status == "cancelled":
        return stop.exit_code
    return 0 if run.status == "ok" else 1


def _error(message: str) -> int:
    print(f"error: {message}", file=sys.stderr)
    return 2
