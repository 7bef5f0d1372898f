"""``python -m core evidence RUN_ID``: each claim of a run with the documents that support it, the span of each,
its support level and why (the offline linker; ``--judge`` adds the configured endpoint's reason beside it)."""

from __future__ import annotations

import sys
import textwrap
from itertools import groupby

from core.engine.llm.client import LLM
from core.engine.methods.bounds import char_bounds, cut_words
from core.engine.store import RunStore
from core.engine.trace import Run
from core.studio.evidence import LEVEL_WORDS, EvidenceMap, cut_at, judge_map, link_run, reference_agreement
from core.studio.workshop.pack import find_run

WIDTH = 100
MARKS = {"supported": "✓", "partly": "~", "not_found": "✗"}


def register(commands) -> None:
    p = commands.add_parser("evidence", help="each claim of a run with the snippets, spans and support level")
    p.add_argument("run_id", metavar="RUN_ID", help="a saved run's id, or a workshop pack run's")
    p.add_argument("--judge", action="store_true", help="also ask the configured endpoint, one call per claim")
    p.add_argument("--all-links", action="store_true", help="every link of a claim, not only its best three")
    p.set_defaults(handler=handle)


def find(run_id: str) -> Run | None:
    """A saved run, else a run of the recorded workshop pack."""
    run = RunStore().find_run(run_id)
    if run is None and (entry := find_run(run_id)) is not None:
        run = entry.run
    return run


def handle(args) -> int:
    run = find(args.run_id)
    if run is None:
        print(f"error: no saved run and no workshop pack run has the id {args.run_id!r}", file=sys.stderr)
        return 2
    emap = link_run(run)
    if args.judge:
        emap = judge_map(emap, LLM())
    print(render(emap, run, None if args.all_links else 3))
    return 0


def render(emap: EvidenceMap, run: Run, best: int | None = 3) -> str:
    out = [
        f"run {run.id} · {run.method} · {len(emap.claims)} claims · {len(emap.documents)} documents "
        f"· linked in {emap.seconds:.1f} s (linker {emap.version})"
    ]
    if (agreement := reference_agreement()) is not None:
        out.append(agreement.sentence())
    else:
        out.append("These links have not been measured against a person's labels.")
    if emap.judge is not None:
        out.append(emap.judge.words())
    section = None
    bounds = char_bounds(run.method)
    # a section that repeats a sentence (an arbiter's column listing one conflict twice) shows it once, counted
    for _, same in groupby(emap.claims, key=lambda c: (c.section, c.text)):
        claim, *repeats = list(same)
        if claim.section != section:
            section = claim.section
            out.append(f"\n== {section} ({claim.agent})")
        level = emap.level_of(claim.id)
        notes = ["restates the question"] if claim.restates_question else []
        if claim.cited:
            notes.append("cites " + ", ".join(claim.cited))
        if repeats:
            notes.append(f"said {len(repeats) + 1} times: " + ", ".join(c.id for c in repeats) + " repeat it")
        if (bound := cut_at(run, claim, bounds)) is not None:
            notes.append(f"cut: {cut_words(bound)}")
        out.append(
            textwrap.fill(
                f"{MARKS[level]} [{claim.id}] {claim.text}" + (f"  ({'; '.join(notes)})" if notes else ""),
                WIDTH,
                subsequent_indent="    ",
            )
        )
        for ln in emap.links_of(claim.id)[:best]:
            doc = emap.documents[ln.snippet_id]
            span = doc.text[ln.span[0] : ln.span[1]]
            out.append(
                f"    {MARKS[ln.level]} {LEVEL_WORDS[ln.level]} by {ln.snippet_id} ({ln.source}) "
                f"chars {ln.span[0]}-{ln.span[1]}, score {ln.score:.2f}"
            )
            out.append(textwrap.fill(f"“{span}”", WIDTH, initial_indent="      ", subsequent_indent="       "))
            out.append(textwrap.fill(f"why: {ln.why}", WIDTH, initial_indent="      ", subsequent_indent="        "))
            if ln.judge_level is not None:
                out.append(
                    textwrap.fill(
                        f"judge: {LEVEL_WORDS[ln.judge_level]}: {ln.judge_why}",
                        WIDTH,
                        initial_indent="      ",
                        subsequent_indent="        ",
                    )
                )
    unsupporting = emap.cited_unsupporting()
    out.append("\ncited but supporting no claim: " + (", ".join(unsupporting) if unsupporting else "(none)"))
    return "\n".join(out)
