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

import psutil

from core.engine.paths import REPO_ROOT
from core.engine.retrieval.dense import default_embedder
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
IDLE_PERCENT = 10  # other programs' CPU, in % of one core, below which the machine counts as otherwise idle


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
    started = time.perf_counter()
    default_embedder().encode(["load the embedder before any run is timed"])
    load = time.perf_counter() - started
    others = OthersCpu()
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
            "embedder_load": round(load, 1),
            "others_percent_of_one_core": others.percent(),
        },
        "machine": {
            "cpus": os.cpu_count(),
            "threads": settings().compute_threads(),
            "python": platform.python_version(),
        },
        "measured": time.strftime("%Y-%m-%d"),
    }


class OthersCpu:
    """The CPU every other program used from now until ``percent()``, in percent of one core: what the timed runs
    shared the machine with."""

    def __init__(self) -> None:
        self.me, self.started = psutil.Process(), time.perf_counter()
        self.busy, self.mine = self._busy(), self._mine()

    def _busy(self) -> float:
        t = psutil.cpu_times()
        return t.user + t.nice + t.system + getattr(t, "irq", 0.0) + getattr(t, "softirq", 0.0)

    def _mine(self) -> float:
        t = self.me.cpu_times()
        return t.user + t.system

    def percent(self) -> float:
        others = (self._busy() - self.busy) - (self._mine() - self.mine)
        return round(100 * max(0.0, others) / max(time.perf_counter() - self.started, 1e-9))


def sharing(seconds: dict) -> str:
    """What else the machine did while the runs were timed (results before it was measured say "other work")."""
    others = seconds.get("others_percent_of_one_core")
    if others is None:
        return "shared with other work"
    said = "otherwise idle" if others < IDLE_PERCENT else "shared with other work"
    return f"{said} (other programs used {others}% of one core meanwhile)"


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
    c = data["confusion"]
    said_supports = sum(c["supports"].values())
    partly = sum(c[person]["partly"] for person in c)
    return PAGE.format(
        found=f"{c['supports']['supported'] + c['supports']['partly']} of {said_supports}",
        partly_no=f"{c['no']['partly']} of {partly}",
        table=table(data),
        confusion=confusion_table(data),
        labels=data["labels"],
        version=data["linker_version"],
        runs=t["runs"],
        median=t["median"],
        max=t["max"],
        cpus=data["machine"]["cpus"],
        date=data["measured"],
        load=t["embedder_load"],
        sharing=sharing(t),
    )


PAGE = """# Evidence a clinician can check

<!-- Generated by benchmarks/evidence_bench.py from benchmarks/results/evidence_linker.json; do not edit. -->

Every claim of a run (each sentence of the final answer and its rationale, and where a method has them, its agents'
findings: SEMA-RAG's arbitration columns and summary, MASS-RAG's three views, Discuss-RAG's final summary, MedRGAG's
generated documents) is linked to the snippets that support it, retrieved or generated and said apart, with the span
of the snippet that supports it, a level (**supported**, **partly**, **not found**) and why in words. A snippet the
answer cites that supports none of the answer's claims is named. Nothing is stored: the links are computed from the
run's own events, cached in memory by run id and linker version (`core/studio/evidence/`).

## How it links (offline)

- Claims are sentences (`claims_of`), with their offsets in the text the trace keeps; ids a sentence cites in
  brackets (an arbiter's `[tp-stemi-k1, tp-stemi-n2]`) are kept with it. A sentence with four fifths of its words in
  the question restates the case: no document can attest a patient's own findings, so it is never "supported".
- For each claim, the words pick its candidate documents (the six sharing most of its words, beyond the question's
  own), and in each the two best spans of one or two sentences; only those are embedded, by the embedder retrieval
  already ships (all-MiniLM-L6-v2, the same loaded instance). A span's score is half its cosine with the claim and
  half the share of the claim's own words it holds. **Supported**: score ≥ 0.62, half the claim's words in the span,
  and every number the claim adds (a dose, a threshold) in it too; **partly**: score ≥ 0.45. These rules and
  thresholds were written once, on the STEMI case's runs, before the labels below were compared with them.
- A sentence of a MedRGAG generated document is never linked to that same document.
- With an endpoint configured, `python -m core evidence RUN_ID --judge` (and `judge_map`) asks the model once per
  claim, through the studio's client (so the response cache keeps the calls and a second pass costs nothing), and
  shows its level and reason beside the linker's, with the tokens and price of the pass. It never replaces the
  offline verdict.

## Where to see it

- **Ask, Compare, History, Workshop replay, run files**: under a finished run's answer, turn on *Claims and their
  evidence*; click a claim and its supporting spans light up in the snippet cards (the answer's cited cards, the
  Evidence tab, the trace); click a card's *supports N claims* tag and the claims it supports light up. The
  figure below is shown beside the claims.
- **Command line**: `python -m core evidence RUN_ID` prints each claim with its snippets, spans, level and why; a
  workshop pack run's id works without a saved store.
- **Benchmark**: *Citation precision and recall* adds, beside accuracy, how many of the answer's claims its cited
  snippets support (recall) and how many cited snippets support one of its claims (precision), with 95% Wilson
  intervals (`python -m core eval ... --citations` on the command line).

## Measured against a person

A person (annotator `reference-1`) labelled {labels} claim × snippet pairs from the workshop pack's recorded runs,
all seven methods, supports / partly / no, reading each claim and snippet as a clinician would and without the
linker's verdict (`data/evidence/attribution_labels.jsonl`, with a note on the close calls). The pairs were drawn by
a seeded rule that never looks at the linker: up to three claims a run (preferring those that say more than the
case), each with a snippet it cites, else one of the case's own teaching passages the run retrieved, else one of its
five best-ranked snippets. CoT retrieves nothing, so its claims were paired with the snippets MedRAG retrieved for
the same case. Below, "supported" is the positive class: precision is the share of the linker's "supported" links
that the person labelled supports; recall, the share of the person's "supports" that the linker found supported.
Linker version {version}; intervals are 95% Wilson score intervals; the pairs of one run are not independent, so
the intervals are if anything too narrow.

{table}

What the person said against what the linker said, every pair:

{confusion}

Reading: of the pairs the person labelled supports, the linker marked {found} at least partly; of its "partly"
links, {partly_no} were labelled no. So "supported" is the level to trust, and "partly" is where to look, not
evidence in itself. Most of the agreed "supported" links are MASS-RAG's pairs, largely its Extractor's verbatim
quotes; per method, the other arms have one to six "supports" pairs each, too few to tell them apart.

Seconds per run: {median} s median, {max} s at most, linking the {runs} labelled runs one after another on a
machine with {cpus} cores {sharing}, after the embedder was loaded once ({load} s; {date}). The judge pass was
tested on a scripted endpoint's fixed replies (`tests/test_evidence.py`): that checks its control flow, cache and
cost, not its judgement, and no figure here comes from it.

Reproduce: `python -m benchmarks.evidence_bench` (`--to-label` prints the pairs as the person saw them).
"""


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
