"""``python -m core runs export|import``: saved runs to a portable run file, and back."""

from __future__ import annotations

import sys
from pathlib import Path

from core.engine.store import RunStore
from core.studio.runfiles import RunFileError, export_to, import_file


def register(commands) -> None:
    p = commands.add_parser("runs", help="export saved runs to a run file (.json.gz) or import one")
    actions = p.add_subparsers(dest="action", metavar="ACTION", required=True)
    out = actions.add_parser("export", help="write saved runs to one .json.gz file")
    out.add_argument("path", type=Path, help="the file to write (.json.gz)")
    out.add_argument("run_ids", nargs="*", metavar="RUN_ID", help="runs to export, in this order")
    out.add_argument("--all", action="store_true", help="every saved run (newest first)")
    out.add_argument("--method", help="with --all: only this method's runs")
    out.add_argument(
        "--comparison",
        action="store_true",
        help="mark the runs as one comparison (the same question, shown side by side)",
    )
    out.add_argument("--title", default="", help="a title stored in the file")
    out.set_defaults(handler=handle_export)
    into = actions.add_parser("import", help="check a run file whole, then import its runs")
    into.add_argument("paths", type=Path, nargs="+", metavar="PATH", help="run files (.json.gz)")
    into.set_defaults(handler=handle_import)


def handle_export(args) -> int:
    store = RunStore()
    ids = list(args.run_ids)
    if args.all:
        ids += [r["id"] for r in store.list_runs(limit=1_000_000, method=args.method)]
    if not args.path.name.endswith(".json.gz"):
        print(f"error: {args.path}: a run file's name ends in .json.gz", file=sys.stderr)
        return 2
    try:
        run_file = export_to(store, ids, args.path, kind="comparison" if args.comparison else None, title=args.title)
    except RunFileError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    events = sum(len(e.run.events) for e in run_file.runs)
    print(f"wrote {len(run_file.runs)} runs ({events:,} events, {args.path.stat().st_size:,} bytes) to {args.path}")
    return 0


def handle_import(args) -> int:
    store = RunStore()
    failed = 0
    for path in args.paths:
        try:
            print(import_file(store, path).summary())
        except RunFileError as exc:
            print(f"error: {path}: {exc}; nothing was imported from it", file=sys.stderr)
            failed += 1
    return 1 if failed else 0
