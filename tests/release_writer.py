"""Writes a studio database and a response cache through the public functions of whichever ``core`` is first on
the path, and prints as JSON what it wrote. ``tests/test_store_upgrade.py`` runs it on an earlier release's code
(taken from git) to get files as that release wrote them; it uses only functions that release already had.

    python tests/release_writer.py FOLDER     # FOLDER/studio.sqlite and FOLDER/llm_cache.sqlite
"""

from __future__ import annotations

import json
import sys
from pathlib import Path


def _run(method: str, question: str, options: dict[str, str], choice: str, hits: list[str]):
    from core.trace import Answer, Event, Hit, Query, Retrieval, Run, Usage

    run = Run(
        method=method,
        question=question,
        options=options,
        model="scripted",
        corpus=["hpo"] if hits else [],
        params={"k": len(hits)},
    )
    run.events = [Event(run_id=run.id, seq=0, stage="query", agent="Studio", payload=Query(text=question))]
    if hits:
        found = [
            Hit(snippet_id=s, corpus="hpo", title=f"title {s}", text=f"text of {s}", rank=i + 1, score=1 / (i + 1))
            for i, s in enumerate(hits)
        ]
        run.events.append(
            Event(
                run_id=run.id,
                seq=1,
                stage="retrieval",
                agent="Retriever",
                usage=Usage(retrievals=1),
                payload=Retrieval(query=question, hits=found),
            )
        )
    run.events.append(
        Event(
            run_id=run.id,
            seq=len(run.events),
            stage="answer",
            agent="Reader",
            usage=Usage(calls=1, prompt_tokens=120, completion_tokens=8, seconds=0.5),
            payload=Answer(choice=choice, text=options[choice], cited=hits[:1]),
        )
    )
    run.answer, run.status, run.finished = run.events[-1].payload, "ok", run.started + 1.0
    run.totals = run.compute_totals()
    return run


def write(folder: Path) -> dict:
    from core.eval.mirage import BenchItem
    from core.eval.results import EvalResults, config_key
    from core.labels import LabelStore
    from core.labels.claims import NameClaims
    from core.labels.identity import QuestionRef
    from core.llm.cache import ResponseCache
    from core.question import Question
    from core.rooms.store import RoomStore
    from core.runfiles import provenance
    from core.runfiles.format import CorpusRef
    from core.store import RunStore
    from core.store.groups import save_group
    from core.store.prices import put_price
    from core.store.settings import write_setting

    import core

    studio = folder / "studio.sqlite"
    store = RunStore(studio)
    options = {"A": "right coronary artery", "B": "left anterior descending"}
    asked = _run("medrag", "Which artery is occluded in an inferior STEMI?", options, "A", ["s1", "s2"])
    benched = _run("cot", "Which artery supplies the anterior wall?", options, "B", [])
    for run in (asked, benched):
        store.create_run(run)
        for event in run.events:
            store.append_event(event)
        store.finish_run(run)
    group = save_group(store, [asked.id, benched.id], "two methods")
    provenance.record(
        store, asked.id, backend="scripted", corpora=[CorpusRef(name="hpo", fingerprint="fp1")], case_id="stemi"
    )
    item = BenchItem("medqa", "q1", Question(text=benched.question, options=options), "B")
    config = config_key("cot", benched.params, "scripted", [])
    EvalResults(store).record(config, item, benched, preset="")
    put_price(store, "scripted", 0.15, 0.6, "EUR")

    labels = LabelStore(studio)
    ref = QuestionRef("hash-q1", "qhash-1", asked.question, options, "hash")
    labels.set_label(ref, "s1", "ana", 3, "names the artery")
    labels.set_label(ref, "s2", "ana", 1)
    labels.set_label(ref, "s1", "ana", 2, "on second reading")  # a change: kept in the history
    labels.set_final(ref, "s1", 2, "ben", "agreed")
    claimed = NameClaims(studio).take("Dr Dee", "client-1")

    rooms = RoomStore(studio)
    room, presenter = rooms.open_room(title="Inferior STEMI", source="store", run_ids=[asked.id], steps=3)
    member, member_token = rooms.join(room.code, "Cara")
    rooms.predict(room.code, member.id, asked.id, "A")
    rooms.trust(room.code, member.id, "s1", True)
    rooms.set_step(room.code, presenter, 1)

    write_setting(studio, "visitor allowances", json.dumps({"ask": True}))
    ResponseCache(folder / "llm_cache.sqlite").put("key-1", "scripted", "B.", 40, 2, finish_reason="length")
    return {
        "core": core.__file__,
        "runs": [json.loads(r.model_dump_json()) for r in (asked, benched)],
        "group": group,
        "eval": {"config": config, "asked": item.asked},
        "question_id": ref.question_id,
        "claimed": claimed,
        "room": {"code": room.code, "presenter": presenter, "member": member.id, "member_token": member_token},
    }


if __name__ == "__main__":
    print(json.dumps(write(Path(sys.argv[1]))))
