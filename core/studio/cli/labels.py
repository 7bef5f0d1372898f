"""``python -m core labels``: judge pooled snippets, measure agreement and retrieval metrics, export and import
labels (TREC qrels, CSV, JSONL)."""

from __future__ import annotations

import sys
import textwrap
from datetime import date
from pathlib import Path

from core.engine import paths
from core.studio.labels import GRADES, RELEVANT, LabelError, LabelStore, RunFilter, collect, resolve
from core.studio.labels.pool import day_start
from core.studio.labels.progress import queue_order

ORDER_HINT = "grades: " + ", ".join(f"{g} {name}" for g, name in GRADES.items())


def register(commands) -> None:
    p = commands.add_parser("labels", help="relevance labels: pools, judging, agreement, metrics, qrels/CSV/JSONL")
    sub = p.add_subparsers(dest="labels_command", metavar="ACTION", required=True)

    def queue(parser) -> None:
        parser.add_argument(
            "--source",
            choices=("all", "teaching", "eval"),
            default="all",
            help="all runs, the runs of teaching-pack cases, or an evaluation's runs (default all)",
        )
        parser.add_argument(
            "--cases", default="", help="teaching-pack case ids, comma-separated (with --source teaching)"
        )
        parser.add_argument("--datasets", default="", help="benchmark datasets, comma-separated (with --source eval)")
        parser.add_argument("--methods", default="", help="only runs of these methods, comma-separated")
        parser.add_argument("--since", type=date.fromisoformat, help="runs started on or after this day (YYYY-MM-DD)")
        parser.add_argument("--until", type=date.fromisoformat, help="runs started before this day (YYYY-MM-DD)")

    q = sub.add_parser("questions", help="questions in the queue with their pool sizes and how many are judged")
    queue(q)
    q.set_defaults(handler=questions)

    s = sub.add_parser("pool", help="print a question's pool for judging (blind: no method, rank or others' labels)")
    s.add_argument("question_id")
    s.add_argument(
        "--annotator",
        required=True,
        help="your name: the passages others have begun and that need more judges first, each tier shuffled for you",
    )
    s.add_argument("--open", action="store_true", help="show methods, ranks, scores and every label (adjudication)")
    s.add_argument("--unjudged", action="store_true", help="only the passages you have not graded yet")
    queue(s)
    s.set_defaults(handler=pool)

    a = sub.add_parser("add", help="give one snippet a grade (0 not relevant, 1 related, 2 relevant, 3 key)")
    a.add_argument("question_id", help="the question id, or a run id with --run")
    a.add_argument("snippet_id")
    a.add_argument("grade", type=int, choices=sorted(GRADES))
    a.add_argument("--annotator", required=True)
    a.add_argument("--note", default=None)
    a.add_argument("--run", action="store_true", help="the first argument is a run id; its question is used")
    a.set_defaults(handler=add)

    h = sub.add_parser("history", help="every change to a question's labels: who, old, new, when, from where")
    h.add_argument("question_id")
    h.set_defaults(handler=history)

    e = sub.add_parser("export", help="write labels as TREC qrels, CSV or JSONL")
    e.add_argument("--format", choices=("qrels", "csv", "jsonl"), default="qrels")
    e.add_argument("--out", type=Path, help="file to write (default: standard output)")
    e.set_defaults(handler=export)

    i = sub.add_parser("import", help="read labels from a qrels, CSV or JSONL file (checked before writing anything)")
    i.add_argument("file", type=Path)
    i.add_argument("--format", choices=("qrels", "csv", "jsonl"), help="default: from the file name (.csv, .jsonl)")
    i.add_argument("--annotator", help="whose judgments a qrels file holds (required for qrels)")
    i.add_argument(
        "--as",
        dest="importer",
        metavar="NAME",
        help="your annotator name: labels are added or changed only under it (default: --annotator)",
    )
    i.add_argument(
        "--replace",
        action="store_true",
        help="import under the names in the file, adjudications included, adding to and changing other "
        "annotators' labels",
    )
    i.add_argument("--skip-bad", action="store_true", help="import the good lines of a file that has bad ones")
    i.set_defaults(handler=import_)

    g = sub.add_parser("agreement", help="Cohen's kappa per pair of annotators; Fleiss and Krippendorff for 3+")
    queue(g)
    g.set_defaults(handler=agreement)

    m = sub.add_parser("metrics", help="P@k, nDCG@k and MRR per run from the labels, averaged per method")
    queue(m)
    m.add_argument("--k", type=int, default=5, help="k of P@k (default 5)")
    m.add_argument("--ndcg-k", type=int, default=10, help="k of nDCG@k (default 10)")
    m.add_argument(
        "--relevant",
        type=int,
        choices=(1, 2, 3),
        default=RELEVANT,
        help="lowest grade that counts as relevant for P@k and MRR (default 2)",
    )
    m.add_argument("--generated", action="store_true", help="score generated documents too, after the retrieved")
    m.add_argument("--annotator", help="one annotator's labels (default: adjudicated, else the majority)")
    m.add_argument("--csv", type=Path, help="write the per-run metrics here, and the per-method summary beside it")
    m.set_defaults(handler=metrics)


def _filter(args) -> RunFilter:
    def words(text: str) -> frozenset[str]:
        return frozenset(w.strip() for w in text.split(",") if w.strip())

    return RunFilter(
        source=args.source,
        cases=words(args.cases),
        datasets=words(args.datasets),
        methods=words(args.methods),
        since=day_start(args.since) if args.since else None,
        until=day_start(args.until) if args.until else None,
    )


def _fail(message: str) -> int:
    print(f"error: {message}", file=sys.stderr)
    return 2


def questions(args) -> int:
    store = LabelStore()
    rows = store.labels()
    found = collect(paths.db_path(), _filter(args))
    if not found:
        print("no saved run matches this queue")
        return 0
    for q in found:
        labels, _ = resolve(q, rows)
        judged = sum(bool(labels.get(i.pool_id)) for i in q.items)
        methods = ", ".join(sorted({r.method for r in q.runs}))
        print(
            f"{q.question_id}\t{len(q.items)} snippets, {judged} judged\t{len(q.runs)} runs ({methods})\t"
            f"{textwrap.shorten(q.ref.question, 70)}"
        )
    return 0


def pool(args) -> int:
    found = {q.question_id: q for q in collect(paths.db_path(), _filter(args))}
    if args.question_id not in found:
        return _fail(
            f"no saved run in this queue asked question {args.question_id!r}; "
            "`python -m core labels questions` lists them"
        )
    q = found[args.question_id]
    labels, _ = resolve(q, LabelStore().labels([q.question_id]))
    print(f"Question {q.question_id}: {q.ref.question}")
    for letter, text in q.ref.options.items():
        print(f"  {letter}. {text}")
    if args.open and q.gold:
        print(f"  gold answer: {q.gold}")
    print(ORDER_HINT)
    for n, item in enumerate(queue_order(q, labels, args.annotator), 1):
        mine = labels.get(item.pool_id, {}).get(args.annotator)
        if mine and args.unjudged:
            continue
        head = f"[{n}] {item.pool_id}" + (f"  (your grade: {mine.grade})" if mine else "")
        if args.open:
            seen = "; ".join(
                f"{o.method} #{o.rank}" + (" generated" if o.generated else f" {o.corpus}") for o in item.occurrences
            )
            others = ", ".join(f"{who}: {row.grade}" for who, row in labels.get(item.pool_id, {}).items())
            head += f"\n    shown by: {seen}" + (f"\n    labels: {others}" if others else "")
        print(head)
        print(textwrap.indent(textwrap.fill(item.blind_text(), 110), "    "))
    return 0


def add(args) -> int:
    store = LabelStore()
    if args.run:
        from core.engine.store import RunStore
        from core.studio.labels.identity import derive_question

        run = RunStore().find_run(args.question_id)
        if run is None:
            return _fail(
                f"run {args.question_id!r} is not in the store (deleted?); label by question id instead: "
                f"python -m core labels add QUESTION_ID {args.snippet_id} {args.grade} --annotator NAME"
            )
        ref = derive_question(
            run.question,
            run.options,
            registered={r["qhash"]: qid for qid, r in store.registered().items() if r["qhash"]},
        )
    else:
        found = {q.question_id: q for q in collect(paths.db_path())}
        ref = found[args.question_id].ref if args.question_id in found else None
        if ref is None:
            return _fail(
                f"no saved run asked question {args.question_id!r}; import labels for questions from "
                "elsewhere with `labels import`"
            )
    try:
        written = store.set_label(ref, args.snippet_id, args.annotator, args.grade, args.note, source="cli")
    except LabelError as exc:
        return _fail(str(exc))
    print(
        f"{ref.question_id} {args.snippet_id}: {args.grade} ({GRADES[args.grade]}) by {args.annotator}: "
        f"{written.describe()}"
    )
    return 0


def history(args) -> int:
    from datetime import datetime

    changes = LabelStore().history(args.question_id)
    if not changes:
        print(f"no label of question {args.question_id!r} has been given yet")
    for c in changes:
        old = "-" if c["old_grade"] is None else c["old_grade"]
        note = f"  note: {c['new_note']}" if c["new_note"] and c["new_note"] != c["old_note"] else ""
        print(
            f"{datetime.fromtimestamp(c['time']):%Y-%m-%d %H:%M:%S}  {c['kind']:<5} {c['snippet_id']}  "
            f"{c['annotator']}: {old} -> {c['new_grade']}  ({c['source']}){note}"
        )
    return 0


def export(args) -> int:
    from core.studio.labels.exchange import export as write

    text = write(args.format, collect(paths.db_path()), LabelStore())
    if args.out:
        args.out.write_text(text, encoding="utf-8")
        print(f"wrote {text.count(chr(10)) - (args.format == 'csv')} {args.format} row(s) to {args.out}")
    else:
        sys.stdout.write(text)
    return 0


def import_(args) -> int:
    from core.studio.labels.importing import Importer, guess_format, import_labels, parse

    fmt = args.format or guess_format(args.file.name)
    importer = args.importer or (args.annotator if fmt == "qrels" else None)
    try:
        with args.file.open("rb") as stream:
            parsed = parse(fmt, stream, args.annotator)
        if importer is None and not args.replace and (args.skip_bad or not parsed.errors):
            return _fail(
                "say who is importing with --as NAME (labels are added only under your name), or "
                "--replace to import under the names in the file"
            )
        report = import_labels(
            LabelStore(),
            collect(paths.db_path()),
            parsed,
            source=f"import {args.file.name}",
            importer=Importer(importer or "", replace=args.replace),
            skip_bad=args.skip_bad,
        )
    except OSError as exc:
        return _fail(f"{args.file}: cannot read it ({exc})")
    except LabelError as exc:
        return _fail(f"{args.file}: {exc}")
    print(report.describe().replace("line ", f"{args.file}: line ") if parsed.errors else report.describe())
    return 0 if report.written is not None else 1


def agreement(args) -> int:
    from core.studio.labels.agreement import alpha, disagreements, fleiss, pairwise
    from core.studio.labels.review import judged_items

    judged = judged_items(collect(paths.db_path(), _filter(args)), LabelStore().labels())
    if not judged:
        print("no labels in this queue yet")
        return 0
    for a in [*pairwise(judged), fleiss(judged), alpha(judged)]:
        if a is not None:
            print(_coefficient(a))
    print(f"{len(disagreements(judged))} disagreement(s): grades 2+ apart or split on relevance")
    return 0


def _coefficient(a) -> str:
    value = "undefined" if a.value is None else f"{a.value:.3f}"
    interval = f" [95% {a.low:.2f}, {a.high:.2f}]" if a.low is not None else ""
    exact = f", identical {a.exact:.0%}" if a.exact is not None else ""
    why = f" ({a.why})" if a.why else ""
    return f"{a.name} {' / '.join(a.annotators)}: {value}{interval}, n={a.n}{exact}{why}"


def metrics(args) -> int:
    from core.studio.labels.metrics import MetricSettings, compare_methods, run_metrics, summarize, to_csv

    store = LabelStore()
    settings = MetricSettings(
        k=args.k, ndcg_k=args.ndcg_k, relevant=args.relevant, generated=args.generated, annotator=args.annotator
    )
    rows = run_metrics(collect(paths.db_path(), _filter(args)), store.labels(), store.finals(), settings)
    if not rows:
        print("no run in this queue has a judged snippet yet")
        return 0
    measures = [m for m in settings.names() if not m.startswith("judged")] + ["judged_share"]
    summary = summarize(rows, measures)
    print(
        f"{len(rows)} runs scored; relevant = grade {args.relevant}+; labels: "
        f"{args.annotator or 'adjudicated, else majority'}"
    )
    print(f"{'method':<10} {'measure':<13} {'mean':>6}  {'95% interval':<15} n")
    for s in summary:
        interval = f"[{s['low']:.2f}, {s['high']:.2f}]" if s["low"] is not None else "(n<2)"
        print(
            f"{s['method']:<10} {s['measure']:<13} {s['mean']:>6.3f}  {interval:<15} {s['n_questions']} questions, "
            f"{s['n_runs']} runs"
        )
    for measure in measures[:3]:
        for c in compare_methods(rows, measure):
            if c["n_questions"]:
                ci = f"[{c['low']:+.2f}, {c['high']:+.2f}]" if c["low"] is not None else "(n<2)"
                print(
                    f"{measure}: {c['first']} - {c['second']} = {c['mean_difference']:+.3f} {ci} over "
                    f"{c['n_questions']} shared questions: {c['verdict']}"
                )
    if args.csv:
        summary_path = args.csv.with_name(args.csv.stem + "_summary.csv")
        args.csv.write_text(to_csv(rows), encoding="utf-8")
        summary_path.write_text(to_csv(summary), encoding="utf-8")
        print(f"wrote {args.csv} and {summary_path}")
    return 0
