"""The evidence linker against a person's labels.

The pairs: from every recorded run of the workshop pack (``data/workshop_pack``, all seven methods), up to three
claims a run, each paired with one document chosen without the linker: a document the claim cites, else one of the
case's own teaching passages the run retrieved, else one of the run's five best-ranked snippets. CoT retrieves
nothing, so its claims are paired with the documents MedRAG retrieved for the same case (what the snippets would have
said). A person labels each pair supports / partly / no (``data/evidence/attribution_labels.jsonl``, annotator
``reference-1``) without seeing the linker's verdict; this script then links every labelled run and counts.

    .venv/bin/python -m benchmarks.evidence_bench --to-label    # the pairs, for a person to label
    .venv/bin/python -m benchmarks.evidence_bench               # measure; write the results and the shipped figure
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import statistics
import time

from core.engine.paths import REPO_ROOT
from core.engine.settings import settings
from core.engine.trace import Run
from core.studio.eval.stats import wilson
from core.studio.evidence import VERSION, Claim, Document, claims_of, documents_of, reference_labels
from core.studio.evidence.agreement import FIGURE, LABELS
from core.studio.evidence.linker import link
from core.studio.workshop.pack import load_pack

RESULTS = REPO_ROOT / "benchmarks" / "results" / "evidence_linker.json"
SEED = 44
PER_RUN = 3
TOP = 5
# The case whose recorded runs the linker's rules were written against (its output read while writing them); the
# other cases' pairs are held out from that.
DEVELOPED_ON = ("stemi",)


def documents_for(run: Run, runs: dict[str, Run]) -> dict[str, Document]:
    """A run's own documents; CoT's are what MedRAG retrieved for the same case."""
    return documents_of(runs["medrag"] if run.method == "cot" and "medrag" in runs else run)


def pairs() -> list[dict]:
    """The pairs to label, chosen by a seeded draw that never looks at the linker."""
    rng = random.Random(SEED)
    found = []
    for case in load_pack()[0]:
        runs = {m: e.run for m, e in case.runs.items()}
        for method, run in runs.items():
            docs = documents_for(run, runs)
            if not docs:
                continue
            claims = claims_of(run)
            own = [c for c in claims if not c.restates_question and len(c.text.split()) >= 5]
            pool = own if len(own) >= PER_RUN else claims
            for claim in rng.sample(pool, min(PER_RUN, len(pool))):
                doc = rng.choice(_candidates(claim, docs, case.case.id, run))
                found.append(
                    {
                        "case": case.case.id,
                        "method": method,
                        "run_id": run.id,
                        "claim_id": claim.id,
                        "claim": claim.text,
                        "snippet_id": doc.id,
                        "source": doc.source,
                    }
                )
    return found


def _candidates(claim: Claim, docs: dict[str, Document], case: str, run: Run) -> list[Document]:
    cited = [docs[i] for i in claim.cited if i in docs and i != claim.generated_doc]
    if cited:
        return cited
    own = [d for d in docs.values() if d.id.startswith(f"tp-{case}-") and d.id != claim.generated_doc]
    return own or [d for d in docs.values() if d.id != claim.generated_doc][:TOP]


def to_label() -> None:
    runs = {e.run.id: (e.run, {m: x.run for m, x in c.runs.items()}) for c in load_pack()[0] for e in c.runs.values()}
    for n, pair in enumerate(pairs()):
        run, by_method = runs[pair["run_id"]]
        doc = documents_for(run, by_method)[pair["snippet_id"]]
        print(f"### {n} {pair['method']} {pair['case']} {pair['claim_id']} × {pair['snippet_id']} ({doc.source})")
        print(f"CLAIM: {pair['claim']}")
        print(f"DOC: {doc.title} — {doc.text}\n")


def _rate(hits: int, n: int) -> dict:
    low, high = wilson(hits, n) or (0.0, 0.0)
    return {"value": hits / n if n else None, "hits": hits, "n": n, "ci": [round(low, 4), round(high, 4)]}


def scores(rows: list[dict]) -> dict:
    """Precision and recall of "supported" (the person's "supports" against the linker's "supported"), and how often
    the two agree on supported-or-not, each with a 95% Wilson interval."""
    tp = sum(r["label"] == "supports" and r["linker"] == "supported" for r in rows)
    said = sum(r["linker"] == "supported" for r in rows)
    true = sum(r["label"] == "supports" for r in rows)
    agree = sum((r["label"] == "supports") == (r["linker"] == "supported") for r in rows)
    return {
        "n": len(rows),
        "precision": _rate(tp, said),
        "recall": _rate(tp, true),
        "agree": _rate(agree, len(rows)),
    }


def measure() -> dict:
    labels = reference_labels(LABELS)
    cases = load_pack()[0]
    runs = {e.run.id: (e.run, {m: x.run for m, x in c.runs.items()}) for c in cases for e in c.runs.values()}
    rows, seconds = [], {}
    for run_id in dict.fromkeys(label["run_id"] for label in labels):
        run, by_method = runs[run_id]
        claims = claims_of(run)
        texts = {c.id: c.text for c in claims}
        stale = [x["claim_id"] for x in labels if x["run_id"] == run_id and texts.get(x["claim_id"]) != x["claim"]]
        if stale:  # the claims were cut differently since the labels were made: they would label other sentences
            raise SystemExit(f"run {run_id}: labelled claims no longer read as labelled: {', '.join(stale)}")
        started = time.perf_counter()
        links = link(run, claims, documents_for(run, by_method))
        seconds[run_id] = time.perf_counter() - started
        levels = {(ln.claim_id, ln.snippet_id): ln.level for ln in links}
        for label in (x for x in labels if x["run_id"] == run_id):
            rows.append({**label, "linker": levels.get((label["claim_id"], label["snippet_id"]), "not_found")})
    methods = list(dict.fromkeys(r["method"] for r in rows))
    confusion = {
        person: {level: sum(r["label"] == person and r["linker"] == level for r in rows) for level in LEVELS_OUT}
        for person in ("supports", "partly", "no")
    }
    return {
        "linker_version": VERSION,
        "annotator": "reference-1",
        "labels": len(rows),
        "overall": scores(rows),
        "developed_on": list(DEVELOPED_ON),
        "held_out": scores([r for r in rows if r["case"] not in DEVELOPED_ON]),
        "per_method": {m: scores([r for r in rows if r["method"] == m]) for m in methods},
        "confusion": confusion,
        "seconds_per_run": {
            "runs": len(seconds),
            "median": round(statistics.median(seconds.values()), 2),
            "max": round(max(seconds.values()), 2),
            "total": round(sum(seconds.values()), 1),
        },
        "machine": {
            "cpus": os.cpu_count(),
            "threads": settings().compute_threads(),
            "python": platform.python_version(),
        },
        "measured": time.strftime("%Y-%m-%d"),
    }


def figure(data: dict) -> dict:
    """The shipped figure the studio shows beside the links (``core.studio.evidence.reference_agreement``)."""
    o = data["overall"]
    return {
        "linker_version": data["linker_version"],
        "annotator": data["annotator"],
        "n": o["n"],
        "agree": o["agree"]["value"],
        "agree_ci": o["agree"]["ci"],
        "precision": o["precision"]["value"],
        "precision_ci": o["precision"]["ci"],
        "recall": o["recall"]["value"],
        "recall_ci": o["recall"]["ci"],
        "per_method": {
            m: {"n": s["n"], "precision": s["precision"]["value"], "recall": s["recall"]["value"]}
            for m, s in data["per_method"].items()
        },
    }


LEVELS_OUT = ("supported", "partly", "not_found")


def _pct(rate: dict) -> str:
    if rate["value"] is None:
        return "–"
    low, high = rate["ci"]
    return f"{rate['value']:.0%} ({low:.0%}–{high:.0%}; {rate['hits']}/{rate['n']})"


def table(data: dict) -> str:
    rows = [
        "| method | pairs | precision of “supported” | recall of “supported” | agree on supported-or-not |",
        "|---|---:|---|---|---|",
    ]
    every = [("all", data["overall"]), ("all but " + ", ".join(data["developed_on"]), data["held_out"])]
    for method, s in [*data["per_method"].items(), *every]:
        name = f"**{method}**" if method.startswith("all") else method
        rows.append(f"| {name} | {s['n']} | {_pct(s['precision'])} | {_pct(s['recall'])} | {_pct(s['agree'])} |")
    return "\n".join(rows)


def confusion_table(data: dict) -> str:
    rows = ["| the person said | linker: supported | linker: partly | linker: not found |", "|---|---:|---:|---:|"]
    for person, counts in data["confusion"].items():
        rows.append(f"| {person} | " + " | ".join(str(counts[level]) for level in LEVELS_OUT) + " |")
    return "\n".join(rows)


def page(data: dict) -> str:
    """docs/evidence.md, whole."""
    t = data["seconds_per_run"]
    return PAGE.format(
        table=table(data),
        confusion=confusion_table(data),
        labels=data["labels"],
        version=data["linker_version"],
        runs=t["runs"],
        median=t["median"],
        max=t["max"],
        cpus=data["machine"]["cpus"],
        date=data["measured"],
    )


PAGE = "TODO {table}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--to-label", action="store_true", help="print the pairs for a person to label, and stop")
    args = parser.parse_args()
    if args.to_label:
        to_label()
        return
    data = measure()
    RESULTS.write_text(json.dumps(data, indent=1) + "\n", encoding="utf-8")
    FIGURE.write_text(json.dumps(figure(data), indent=1) + "\n", encoding="utf-8")
    print(table(data))
    print(confusion_table(data))
    print(data["seconds_per_run"])


if __name__ == "__main__":
    main()
