"""How often does the answer/reasoning check (``core/studio/consistency.py``) flag an answer, and does a reader agree?

    .venv/bin/python -m benchmarks.consistency_check --ask-live            # CoT on the DKA case, both orders (model)
    .venv/bin/python -m benchmarks.consistency_check --collect STUDIO_DB   # gather CoT answers from an evaluation
    .venv/bin/python -m benchmarks.consistency_check                       # write docs/consistency.md
    .venv/bin/python -m benchmarks.consistency_check --check               # exit 1 if the page is out of date

Runs read: the recorded workshop pack (every method on every case, the papers' order), CoT on the teaching pack's
DKA case asked live on the embedded model in both orders, and CoT on 50 MIRAGE development questions (the first 10
of each dataset in ``dev_ids.json``) answering first and reasoning first. ``--collect`` copies from a studio database
what a reader judges (the chosen letter, the reasoning, the format) into ``benchmarks/results/consistency_runs.json``;
the questions themselves stay in the MIRAGE file, read from ``--bench`` when the page is written. A reader's
judgement of every run is in ``benchmarks/results/consistency_readings.json``: each run listed there was read as the
note says; every run not listed was read and found consistent.
"""

from __future__ import annotations

import argparse
import gzip
import json
import sys
from dataclasses import dataclass
from pathlib import Path

from core.engine.paths import REPO_ROOT
from core.engine.store import RunStore
from core.engine.trace import Answer
from core.studio.consistency import check_answer
from core.studio.teaching import load_cases
from core.studio.workshop.pack import load_pack

RESULTS = REPO_ROOT / "benchmarks" / "results"
RUNS, READINGS = RESULTS / "consistency_runs.json", RESULTS / "consistency_readings.json"
PAGE = REPO_ROOT / "docs" / "consistency.md"
BENCH = REPO_ROOT.parent / "shared" / "data" / "mirage" / "benchmark.json.gz"
FORMATS = ("answer first", "reasoning first")
LIVE_CASE = "dka"


@dataclass
class Read:
    key: str
    group: str
    question: str
    options: dict[str, str]
    answer: Answer


def _answer(answer: Answer) -> dict:
    """What the check reads of an answer: the letter, the reasoning and its order (not the option's text, which
    the benchmark file holds)."""
    return {"choice": answer.choice, "rationale": answer.rationale, "answer_format": answer.answer_format}


def collect(db: Path) -> dict:
    """CoT's answers per format from an evaluation's runs, and CoT's live runs on the DKA case, from a studio db."""
    store = RunStore(db)
    found: dict = {"dev": {}, "live": {}}
    for fmt in FORMATS:
        with store.reading() as studio:
            rows = studio.execute(
                "SELECT dataset, qid, run_id FROM eval_items WHERE method = 'cot' AND params LIKE ? "
                "ORDER BY dataset, qid",
                (f'%"answer_format": "{fmt}"%',),
            ).fetchall()
        found["dev"][fmt] = [{"dataset": d, "qid": q, "answer": _answer(store.load_run(r).answer)} for d, q, r in rows]
    case = next(c for c in load_cases() if c.id == LIVE_CASE)
    for row in store.list_runs(limit=10_000, method="cot"):
        run = store.load_run(row["id"])
        if run.question == case.question and run.answer and run.answer.answer_format in FORMATS:
            found["live"][run.answer.answer_format] = _answer(run.answer)
    return found


def ask_live() -> None:
    """CoT on the DKA case on the embedded model in both orders, saved in the studio folder (MEDRAG_STUDIO_HOME)."""
    from core.engine.llm import LLM
    from core.engine.runner import execute

    case = next(c for c in load_cases() if c.id == LIVE_CASE)
    llm, store = LLM(), RunStore()
    for fmt in FORMATS:
        run = execute("cot", case.to_question(), {"answer_format": fmt}, llm=llm, store=store)
        print(f"{fmt}: run {run.id}, {run.status}, chose {run.answer.choice if run.answer else None}")


def gather(runs: dict, bench: dict | None) -> list[Read]:
    reads = []
    for pack_case in load_pack()[0]:
        for method, entry in pack_case.runs.items():
            run = entry.run
            if run.answer is not None:
                reads.append(
                    Read(
                        f"pack/{pack_case.case.id}/{method}",
                        "Workshop pack, every method (papers' order)",
                        run.question,
                        run.options,
                        run.answer,
                    )
                )
    case = next(c for c in load_cases() if c.id == LIVE_CASE)
    for fmt, answer in runs["live"].items():
        reads.append(
            Read(
                f"live/{LIVE_CASE}/{fmt}",
                "The DKA case, CoT asked live",
                case.question,
                case.options,
                Answer(text="", **answer),
            )
        )
    for fmt, items in runs["dev"].items() if bench is not None else ():
        for item in items:
            asked = bench[item["dataset"]][item["qid"]]
            reads.append(
                Read(
                    f"{fmt}/{item['dataset']}/{item['qid']}",
                    f"MIRAGE dev, CoT {fmt}",
                    asked["question"],
                    asked["options"],
                    Answer(text="", **item["answer"]),
                )
            )
    return reads


def _cell(text: str) -> str:
    return " ".join(text.split()).replace("|", "\\|")


def page(reads: list[Read], readings: dict, bench_found: bool) -> str:
    flagged = {r.key: check_answer(r.answer, r.options, r.question) for r in reads}
    contradiction = {r.key: readings.get(r.key, {}).get("contradiction", False) for r in reads}
    intro = (
        "A small model can choose one letter and argue for another. The answer card flags it "
        "(`core/studio/consistency.py`): the reasoning is read sentence by sentence for the options it argues for or "
        'against (by letter or by their words, denials and "all of the following except" taken into '
        "account), and for a yes/no question, whether the sentence that restates the question says yes or no. "
        "The flag asks the reader to read the reasoning; it is not a verdict."
    )
    method = (
        "Every run below was read by a person, who noted each answer the reasoning contradicts (chosen one "
        "option, argued for another, or argued against the one chosen). Generated by "
        "`python -m benchmarks.consistency_check` from `benchmarks/results/consistency_runs.json` (the "
        "answers), `benchmarks/results/consistency_readings.json` (the readings), the recorded workshop pack "
        "and the MIRAGE questions."
    )
    lines = [
        "# Does the answer agree with its own reasoning?",
        "",
        intro,
        "",
        method,
        "",
        "## Figures",
        "",
        "| runs | n | flagged | flagged, reader agrees | contradictions (reader) | flagged of those |",
        "| --- | --- | --- | --- | --- | --- |",
    ]
    for group in dict.fromkeys(r.group for r in reads):
        mine = [r.key for r in reads if r.group == group]
        hit = [k for k in mine if flagged[k]]
        said = [k for k in mine if contradiction[k]]
        lines.append(
            f"| {group} | {len(mine)} | {len(hit)} | {sum(contradiction[k] for k in hit)} | {len(said)} | "
            f"{sum(bool(flagged[k]) for k in said)} |"
        )
    if not bench_found:
        lines += ["", "The MIRAGE rows are missing: the benchmark file was not found where this page was written."]
    lines += [
        "",
        "## Every flagged answer",
        "",
        "| run | chosen | the reasoning | the sentence | reader |",
        "| --- | --- | --- | --- | --- |",
    ]
    for r in reads:
        if m := flagged[r.key]:
            argues = f"argues for {m.argued}" if m.argued else f"argues against {m.chosen}"
            verdict = "agrees" if contradiction[r.key] else "disagrees"
            note = readings.get(r.key, {}).get("reading", "read as consistent")
            lines.append(f"| `{r.key}` | {m.chosen} | {argues} | {_cell(m.because)} | {verdict}: {_cell(note)} |")
    lines += ["", "## Contradictions the check does not flag", "", "| run | reader |", "| --- | --- |"]
    for r in reads:
        if contradiction[r.key] and not flagged[r.key]:
            lines.append(f"| `{r.key}` | {_cell(readings[r.key]['reading'])} |")
    lines += ["", "## Read as consistent, with a note", "", "| run | reader |", "| --- | --- |"]
    for r in reads:
        if r.key in readings and not contradiction[r.key] and not flagged[r.key]:
            lines.append(f"| `{r.key}` | {_cell(readings[r.key]['reading'])} |")
    how = (
        "The MIRAGE runs and the DKA case on the embedded model (about 10 minutes a format on two cores, a minute "
        "for the case), then this page:"
    )
    lines += [
        "",
        "## Reproduce",
        "",
        how,
        "",
        "```",
        "export MEDRAG_STUDIO_HOME=/tmp/consistency",
        'for f in "answer first" "reasoning first"; do .venv/bin/python -m core eval --methods cot \\',
        "  --bench ../shared/data/mirage/benchmark.json.gz --ids ../shared/data/mirage/dev_ids.json --limit 10 \\",
        '  --concurrency 1 --param "cot.answer_format=\\"$f\\""; done',
        ".venv/bin/python -m benchmarks.consistency_check --ask-live --collect /tmp/consistency/studio.sqlite",
        ".venv/bin/python -m benchmarks.consistency_check",
        "```",
        "",
    ]
    return "\n".join(lines)


def read_bench(path: Path) -> dict | None:
    try:
        with gzip.open(path, "rt", encoding="utf-8") if path.suffix == ".gz" else open(path, encoding="utf-8") as fh:
            return json.load(fh)
    except OSError:
        return None


def render(bench_path: Path = BENCH) -> str:
    runs = json.loads(RUNS.read_text(encoding="utf-8"))
    readings = json.loads(READINGS.read_text(encoding="utf-8"))
    bench = read_bench(bench_path)
    return page(gather(runs, bench), readings, bench is not None)


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--ask-live", action="store_true", help="run CoT on the DKA case first (the embedded model)")
    ap.add_argument("--collect", type=Path, metavar="STUDIO_DB", help="copy CoT's answers from this studio database")
    ap.add_argument("--bench", type=Path, default=BENCH, help="the MIRAGE benchmark file (for the questions)")
    ap.add_argument("--check", action="store_true", help="exit 1 when docs/consistency.md is not what the data give")
    args = ap.parse_args(argv)
    if args.ask_live:
        ask_live()
    if args.collect:
        RUNS.write_text(json.dumps(collect(args.collect), indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
        print(f"wrote {RUNS}")
    text = render(args.bench)
    if args.check:
        same = PAGE.is_file() and PAGE.read_text(encoding="utf-8") == text
        print(
            "docs/consistency.md is up to date"
            if same
            else "docs/consistency.md is out of date: run python -m benchmarks.consistency_check"
        )
        sys.exit(0 if same else 1)
    PAGE.write_text(text, encoding="utf-8")
    print(text.split("## Every flagged answer")[0].split("## Figures")[1].strip())


if __name__ == "__main__":
    main()
