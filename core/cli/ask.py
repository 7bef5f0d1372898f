"""``python -m core ask``: one method on one question, events streamed as they happen."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from pydantic import ValidationError

from core.cli.render import describe, totals_line
from core.llm import LLM
from core.methods import get, registry
from core.question import Question
from core.runner import execute
from core.store import RunStore


def _key_value(text: str) -> tuple[str, str]:
    key, sep, value = text.partition("=")
    if not sep or not key.strip():
        raise argparse.ArgumentTypeError(f"expected KEY=VALUE, got {text!r}")
    return key.strip(), value


def register(commands) -> None:
    p = commands.add_parser("ask", help="ask one question with one method and stream its trace")
    p.add_argument("question", help="the question text")
    p.add_argument("--option", action="append", type=_key_value, default=[], metavar='A="text"',
                   help="a multiple-choice option (repeat for each)")
    p.add_argument("--method", default="cot", help=f"one of: {', '.join(registry())}")
    p.add_argument("--param", action="append", type=_key_value, default=[], metavar="KNOB=VALUE",
                   help="a method knob (JSON values, e.g. rounds=2)")
    p.add_argument("--corpus", action="extend", nargs="+", type=Path, default=[], metavar="PATH",
                   help="corpus files or folders (several, or repeat); default: the embedded corpus")
    p.add_argument("--json", action="store_true", help="print the whole run as JSON at the end")
    p.set_defaults(handler=handle)


def _param_value(text: str):
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        return text


def handle(args) -> int:
    try:
        question = Question(text=args.question, options=dict(args.option))
        spec = get(args.method)
        params = spec.params(**{k: _param_value(v) for k, v in args.param})
    except (ValidationError, KeyError) as exc:
        message = "; ".join(e["msg"] for e in exc.errors()) if isinstance(exc, ValidationError) else exc.args[0]
        print(f"error: {message}", file=sys.stderr)
        return 2
    retriever = None
    if spec.uses_retrieval:
        from core.retrieval import open_retriever

        retriever = open_retriever(args.corpus or None, progress=True)
    run = execute(spec.name, question, params.model_dump(), llm=LLM(), retriever=retriever, store=RunStore(),
                  sinks=[lambda event: print(describe(event), flush=True)])
    print(totals_line(run))
    if args.json:
        print(run.model_dump_json(indent=2))
    return 0 if run.status == "ok" else 1
