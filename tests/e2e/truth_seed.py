"""A studio folder as a team leaves it after a week: recorded runs of the embedded model (the asthma case by three
methods, the DKA case answered first, a MASS-RAG run of the workshop pack), one of them asked again under a
benchmark question that retrieves teaching-pack passages, a kept comparison, and three annotators' labels that
disagree. The browser tests and the screenshots of the studio before and after a change start from it."""

from __future__ import annotations

import json
import uuid
from pathlib import Path

from core.engine.trace import Run

DATA = Path(__file__).resolve().parents[1] / "data"
BENCH_QUESTION = (
    "A 23-year-old woman at 6 weeks' gestation has mild asthma controlled with a salbutamol inhaler. "
    "She asks which inhaler is safest in pregnancy. What is the most appropriate advice?"
)
# grades per annotator for the pooled passages, in pool order: the owner and two annotators who disagree
GRADES = {"owner": [3, 3, 2, 1, 3, 0, 2, 3], "ann": [1, 0, 2, 1, 3, 2, 0, 3], "bob": [0, 0, 2, 3, 3, 0, 1, 1]}


def recorded(name: str) -> Run:
    return Run.model_validate_json((DATA / f"{name}.json").read_text())


def asked_again(run: Run, question: str) -> Run:
    """The same trace under another question and a new id (as the question a benchmark asked)."""
    new = uuid.uuid4().hex[:12]
    events = [e.model_copy(update={"run_id": new}) for e in run.events]
    return run.model_copy(update={"id": new, "question": question, "events": events})


def save(store, run: Run) -> None:
    store.create_run(run)
    for event in run.events:
        store.append_event(event)
    store.finish_run(run)


def seed(home: Path) -> dict[str, str]:
    """Fills ``home``'s store; the run ids the tests open, by name."""
    from core.engine.store import RunStore
    from core.engine.store.groups import save_group
    from core.studio.labels import LabelStore, collect
    from core.studio.workshop.pack import load_pack

    store = RunStore(home / "studio.sqlite")
    sema, cot, medrag = (recorded(n) for n in ("sema_asthma_run", "cot_asthma_run", "medrag_asthma_run"))
    dka = recorded("cot_dka_answer_first_run")
    mass = next(c for c in load_pack()[0] if c.case.id == "stemi").runs["mass"].run
    bench = asked_again(sema, BENCH_QUESTION)
    for run in (sema, cot, medrag, dka, mass, bench):
        save(store, run)
    save_group(store, [medrag.id, cot.id], "asthma: MedRAG and CoT")
    labels = LabelStore(home / "studio.sqlite")
    for question in collect(store.path):
        for who, grades in GRADES.items():
            for item, grade in zip(question.items, grades):
                labels.set_label(question.ref, item.pool_id, who, grade)
    return {"sema": sema.id, "cot": cot.id, "medrag": medrag.id, "dka": dka.id, "mass": mass.id, "bench": bench.id}


def mini_benchmark(folder: Path) -> Path:
    """Four teaching cases as a MIRAGE-format benchmark: short CoT runs that fill the embedded model's four slots."""
    from core.studio.teaching import load_cases

    cases = load_cases()[:4]
    path = folder / "four_cases.json"
    path.write_text(
        json.dumps({"cases": {c.id: {"question": c.question, "options": c.options, "answer": c.answer} for c in cases}})
    )
    return path
