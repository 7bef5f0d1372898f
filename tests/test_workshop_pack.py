"""The workshop pack: recorded case by case into run files, resumable after an interruption, with a status that
says what is recorded and what is missing (a scripted model here; the real recording is `workshop record`)."""

from __future__ import annotations

import threading

from core.__main__ import main
from core.studio.teaching import load_cases
from core.studio.workshop import pack
from tests.fakes import ListRetriever, ScriptedLLM, make_hits

CASES = [c for c in load_cases() if c.id in ("stemi", "asthma")]


def scripted() -> ScriptedLLM:
    return ScriptedLLM().on("", lambda messages: {"reasoning": "r", "answer": "B", "cited_ids": []})


def test_recording_is_resumable_and_says_what_is_missing(tmp_path):
    folder = tmp_path / "pack"
    retriever = ListRetriever(make_hits(5))
    cancel, started = threading.Event(), []

    def stop_in_second(case, method) -> None:  # Ctrl-C while the second run is in flight
        started.append((case.id, method))
        if len(started) == 2:
            cancel.set()

    done = pack.record(
        CASES,
        ["cot", "medrag"],
        llm=scripted(),
        retriever=retriever,
        folder=folder,
        on_start=stop_in_second,
        cancel=cancel,
    )
    assert [r.method for r in done] == ["cot"] and len(started) == 2  # the cancelled run is not saved, none follows
    assert pack.status(CASES, ["cot", "medrag"], folder) == {
        ("stemi", "cot"): "ok",
        ("stemi", "medrag"): "missing",
        ("asthma", "cot"): "missing",
        ("asthma", "medrag"): "missing",
    }
    planned = []
    done = pack.record(
        CASES, ["cot", "medrag"], llm=scripted(), retriever=retriever, folder=folder, on_plan=planned.append
    )
    assert [(c.id, m) for c, m in planned[0]] == [("stemi", "medrag"), ("asthma", "cot"), ("asthma", "medrag")]
    assert [r.method for r in done] == ["medrag", "cot", "medrag"]
    found, problems = pack.load_pack(folder, CASES)
    assert problems == [] and [p.case.id for p in found] == ["stemi", "asthma"]
    stemi = found[0]
    assert list(stemi.runs) == ["cot", "medrag"] and stemi.runs["medrag"].case_id == "stemi"
    assert stemi.runs["medrag"].corpora[0].name == "teaching" and stemi.runs["cot"].corpora == []
    assert pack.find_run(stemi.runs["cot"].run.id, folder).run == stemi.runs["cot"].run
    assert pack.record(CASES, ["cot"], llm=scripted(), retriever=retriever, folder=folder) == []  # nothing left
    # after a method changed, --again records what is there anew, replacing each run as its new one ends
    again = pack.record(CASES, ["cot"], llm=scripted(), retriever=retriever, folder=folder, again=True)
    assert [r.method for r in again] == ["cot", "cot"]
    assert pack.load_pack(folder, CASES)[0][0].runs["cot"].run.id == again[0].id != stemi.runs["cot"].run.id


def test_errors_are_recorded_and_recorded_again_on_request(tmp_path):
    folder = tmp_path / "pack"
    failing = ScriptedLLM().on("", "never json")
    pack.record(CASES[:1], ["cot"], llm=failing, retriever=ListRetriever(make_hits(2)), folder=folder)
    assert pack.status(CASES[:1], ["cot"], folder) == {("stemi", "cot"): "error"}
    assert pack.to_record(CASES[:1], ["cot"], folder) == []
    assert [m for _, m in pack.to_record(CASES[:1], ["cot"], folder, retry_errors=True)] == ["cot"]
    assert "ended in error (record again with --retry-errors): stemi/cot" in pack.status_table(
        CASES[:1], ["cot"], folder
    )


def test_status_from_the_command_line(tmp_path, capsys):
    folder = tmp_path / "pack"
    pack.record(CASES[:1], ["cot"], llm=scripted(), retriever=ListRetriever(make_hits(2)), folder=folder)
    assert (
        main(
            [
                "workshop",
                "record",
                "--status",
                "--cases",
                "stemi,asthma",
                "--methods",
                "cot,medrag",
                "--pack",
                str(folder),
            ]
        )
        == 0
    )
    out = capsys.readouterr().out
    assert out.splitlines()[1].split() == ["stemi", "✓", "·"] and "recorded 1 of 4; missing 3" in out
    assert main(["workshop", "record", "--status", "--cases", "nope"]) == 2
    assert "no teaching case has the id nope" in capsys.readouterr().err
    assert main(["workshop", "record", "--status", "--methods", "cot,magic"]) == 2


def test_the_shipped_pack_reads_whole_and_stays_within_its_budget():
    found, problems = pack.load_pack(pack.PACK_DIR)
    assert problems == [] and found, "the repository's workshop pack is missing or unreadable"
    assert pack.pack_bytes(pack.PACK_DIR) < pack.SIZE_BUDGET
    for recorded in found:
        for method, entry in recorded.runs.items():
            assert entry.case_id == recorded.case.id and entry.run.method == method
            assert entry.run.question == recorded.case.question and entry.backend  # recorded, with its backend
