"""The Benchmark page with a scripted model: a run in the background with progress, stop and resume, resuming
what the command line started (and the other way round), the one-click ablations, the results down to each
question's links, and bad input said in place."""

from __future__ import annotations

import json

import pytest
from streamlit.testing.v1 import AppTest

from core.__main__ import main
from core.studio.eval.job import EvalJob
from tests.fakes import ListRetriever, ScriptedLLM, make_hits
from tests.test_eval import BENCH, IDS
from tests.test_eval_presets import mass_llm
from tests.waiting import Gate, patience, wait_until
from ui.common.jobs import runner
from ui.common.keys import LLM_OVERRIDE, RETRIEVER_OVERRIDE


@pytest.fixture(autouse=True)
def no_jobs():
    runner.clear()  # the runner lives as long as the process, as in the server
    yield
    for job in runner().jobs():
        job.cancel()
        job.until_done(patience())
    runner.clear()


@pytest.fixture
def bench(tmp_path):
    path = tmp_path / "mini.json"
    path.write_text(json.dumps(BENCH))
    ids = tmp_path / "ids.json"
    ids.write_text(json.dumps(IDS))
    return path, ids


def answering(letter: str = "A", gate: Gate | None = None) -> ScriptedLLM:
    return ScriptedLLM(gate=gate).enqueue(*[{"reasoning": "r", "answer": letter}] * 60)


def page(path, llm, **state) -> AppTest:
    at = AppTest.from_string("from ui.benchmark.page import page\npage()", default_timeout=30)
    at.session_state[LLM_OVERRIDE] = llm
    at.session_state["bench.path"] = str(path)
    for key, value in state.items():
        at.session_state[key] = value
    return at.run()


def finish(at: AppTest) -> AppTest:
    job = runner().latest(EvalJob)
    assert job is not None and job.until_done(patience())
    return at.run()


def table_with(at: AppTest, column: str):
    return next(d.value for d in at.dataframe if column in d.value.columns)


def text_of(at: AppTest) -> str:
    return "\n".join(m.value for m in at.markdown)


def test_a_benchmark_runs_in_the_background_and_shows_results_with_intervals(bench):
    path, _ = bench
    at = page(path, answering("A"))
    assert not at.exception and not at.error
    assert "5 questions × 1 arm(s) = **5 runs**, 0 finished" in text_of(at)  # 4 a dataset asked, 3 + 2 there
    at = finish(at.button(key="bench.start").click().run())
    assert not at.exception and not at.error
    assert ":green-badge[finished] mini: 5 questions × cot" in text_of(at)
    table = at.dataframe(key="bench.summary").value
    assert list(table["arm"]) == ["CoT"] * 3 and list(table["dataset"]) == ["medqa", "pubmedqa", "all"]
    assert table.iloc[-1]["correct / n"] == "3 / 5" and table.iloc[-1]["95% CI"] == "23.1%–88.2%"
    assert at.button(key="bench.start").label == "All finished" and at.button(key="bench.start").disabled
    progress = [p.text for p in at.get("progress")]
    assert progress == ["**CoT**: 5 of 5 questions · 0 errors · 0 s of runs, 0 s per question"]
    chosen = table_with(at, "Stuart–Maxwell p")  # every answer "A": 3 of medqa's, 1 of pubmedqa's right
    assert list(chosen["dataset"]) == ["medqa", "pubmedqa"]
    assert list(chosen["A"]) == ["3 / 2", "2 / 1"] and list(chosen["B"]) == ["0 / 1", "0 / 1"]
    assert "no arm leans to an option more than the data can separate from chance" in text_of(at)


def test_stop_then_resume_and_the_command_line_picks_up_the_rest(bench, monkeypatch, capsys):
    path, _ = bench
    gate = Gate()
    gate.let(2)  # two questions are answered; the third's call is held until Stop cuts it
    at = page(path, answering("A", gate), **{"bench.concurrency": 1})
    at.button(key="bench.start").click().run()
    wait_until(lambda: gate.held, "the third question's call")
    at.run()
    at.button(key="bench.stop").click().run()
    at = finish(at)
    assert runner().latest(EvalJob).status == "stopped"
    assert ":orange-badge[stopped]" in text_of(at)
    done = runner().latest(EvalJob).outcome.ran
    assert done == 2
    assert at.button(key="bench.start").label == f"Resume ({5 - done} left)"

    # the command line, same benchmark, questions, knobs and backend: it runs only what is left
    monkeypatch.setattr("core.studio.cli.eval.LLM", lambda: answering("A"))
    argv = ["eval", "--methods", "cot", "--bench", str(path), "--sample", "4", "--out", str(path.parent / "out")]
    assert main(argv) == 0
    assert f"{5 - done} run(s) now, {done} from before" in capsys.readouterr().out
    at.run()
    assert at.button(key="bench.start").label == "All finished"
    assert main(argv + ["--report"]) == 0
    assert "cot  all       60.0% (3/5)  23.1%–88.2%" in capsys.readouterr().out


def test_a_running_benchmark_is_listed_in_history_and_stops_from_there(bench):
    path, _ = bench
    at = page(path, answering("A", Gate()), **{"bench.concurrency": 1})  # held until stopped
    at.button(key="bench.start").click().run()
    job = runner().latest(EvalJob)
    history = AppTest.from_string("from ui.history.page import page\npage()", default_timeout=30).run()
    assert not history.exception
    line = next(m.value for m in history.markdown if ":gray-badge[benchmark]" in m.value)
    assert "**mini\\: 5 questions × cot**" in line and " of 5 runs on scripted @ " in line
    history.button(key=f"history.stop.{job.id}").click().run()
    assert job.until_done(patience()) and job.status == "stopped" and job.outcome.ran < 5
    assert ":orange-badge[stopped]" in text_of(at.run())


def test_the_page_resumes_what_the_command_line_started(bench, monkeypatch, capsys):
    path, ids = bench
    monkeypatch.setattr("core.studio.cli.eval.LLM", lambda: answering("B"))
    assert main(["eval", "--methods", "cot", "--bench", str(path), "--ids", str(ids), "--limit", "1"]) == 0
    llm = answering("B")
    at = page(path, llm, **{"bench.pick": "An ids file", "bench.ids": str(ids)})
    assert "4 questions × 1 arm(s) = **4 runs**, 2 finished" in text_of(at)
    at = finish(at.button(key="bench.start").click().run())
    assert len(llm.calls) == 2 and runner().latest(EvalJob).outcome.skipped == 2


def test_the_page_and_the_command_line_share_a_method_with_an_automatic_knob(bench, monkeypatch, capsys):
    """MASS-RAG's Answer Agent knob defaults to None (the method decides by the kind of question): the page keeps
    it so, and its configuration is the command line's."""
    path, _ = bench
    monkeypatch.setattr("core.studio.cli.eval.LLM", mass_llm)
    monkeypatch.setattr("core.engine.retrieval.open_retriever", lambda *a, **k: ListRetriever(make_hits(5)))
    assert main(["eval", "--methods", "mass", "--bench", str(path), "--sample", "4"]) == 0
    at = page(path, mass_llm(), **{"bench.methods": ["mass"], RETRIEVER_OVERRIDE: ListRetriever(make_hits(5))})
    assert "5 questions × 1 arm(s) = **5 runs**, 5 finished" in text_of(at)
    assert at.selectbox(key="bench.knobs.mass.answer_agent").value is None


def test_another_benchmark_brings_its_own_datasets(bench, tmp_path):
    path, _ = bench
    at = page(path, answering())
    assert at.multiselect(key="bench.datasets").value == ["medqa", "pubmedqa"]
    at.multiselect(key="bench.datasets").set_value(["pubmedqa"]).run()
    other = tmp_path / "other.json"
    other.write_text(json.dumps({"cases": BENCH["medqa"], "pubmedqa": BENCH["pubmedqa"]}))
    at.text_input(key="bench.path").input(str(other)).run()
    assert at.multiselect(key="bench.datasets").value == ["pubmedqa"]  # the one chosen, which it also has
    at.multiselect(key="bench.datasets").set_value([]).run()
    assert at.error[0].value == "Choose at least one dataset."  # emptied on purpose: said, not refilled
    at.text_input(key="bench.path").input(str(path.with_name("third.json"))).run()
    path.with_name("third.json").write_text(json.dumps({"mmlu": BENCH["medqa"]}))
    at.run()
    assert at.multiselect(key="bench.datasets").value == ["mmlu"] and not at.error


def test_one_click_adds_an_ablation_and_its_full_method(bench):
    path, _ = bench
    at = page(path, answering())
    at.selectbox(key="bench.group").set_value("SEMA-RAG without one agent").run()
    assert at.multiselect(key="bench.presets").value == ["sema-no-i", "sema-no-e", "sema-no-a"]
    assert at.multiselect(key="bench.methods").value == ["cot", "sema"]
    assert at.selectbox(key="bench.group").value is None  # a click, not a lasting choice
    assert "5 questions × 5 arm(s) = **25 runs**" in text_of(at)


def test_a_cell_opens_its_questions_with_links_to_history_and_compare(bench):
    path, _ = bench
    at = page(
        path, answering("A"), **{"bench.methods": ["cot", "medrag"], RETRIEVER_OVERRIDE: ListRetriever(make_hits(4))}
    )
    at = finish(at.button(key="bench.start").click().run())
    runs = {(r.arm, r.qid): r.run_id for r in runner().latest(EvalJob).outcome.rows}
    at.selectbox(key="bench.cell").set_value("cot|medqa").run()  # as a click on the table's first line does
    questions = table_with(at, "gold")
    assert list(questions["id"]) == ["q1", "q2", "q3"] and list(questions["gold"]) == ["B", "A", "A"]
    assert list(questions["correct"]) == [False, True, True]
    assert list(questions["trace"]) == [f"/history?run={runs[('cot', q)]}" for q in ("q1", "q2", "q3")]
    at.selectbox(key="bench.compare_with").set_value("medrag").run()
    questions = table_with(at, "gold")
    assert list(questions["compare"]) == [
        f"/compare?runs={runs[('cot', q)]},{runs[('medrag', q)]}" for q in ("q1", "q2", "q3")
    ]
    assert (
        "**CoT and MedRAG are not distinguishable on these 5 questions (McNemar p = 1.00; 0 vs 0 discordant)**"
        in text_of(at)
    )


@pytest.mark.parametrize(
    "content, message",
    [
        (
            "{broken",
            ("mini.json is not readable JSON: Expecting property name enclosed in double quotes at line 1, column 2"),
        ),
        (
            json.dumps({"medqa": {"q1": {"question": "Q?", "options": {"A": "x", "B": "y"}, "answer": "E"}}}),
            "medqa/q1: the answer 'E' is not one of the options ['A', 'B']",
        ),
    ],
)
def test_bad_input_is_said_in_place_and_nothing_starts(bench, content, message):
    path, _ = bench
    path.write_text(content)
    at = page(path, ScriptedLLM())
    assert not at.exception and message in next(e.value for e in at.error)
    assert not [b for b in at.button if b.key == "bench.start"]


def test_an_upload_that_is_not_json_and_a_folder_are_named(bench):
    path, _ = bench
    at = page(path, ScriptedLLM(), **{"bench.source": "An upload"})
    at.file_uploader(key="bench.upload").set_value(("notes.json", b"not json at all", "application/json")).run()
    assert not at.exception and at.error[0].value.startswith("notes.json is not readable JSON")
    at = page(path.parent, ScriptedLLM())
    assert at.error[0].value == f"{path.parent} is a folder, not a file: name the .json or .json.gz file inside it"


def test_the_corpora_are_checked_on_a_few_questions_and_a_miss_offers_others(bench):
    from core.engine.trace import Hit

    path, _ = bench

    def corpus(*texts: str) -> ListRetriever:
        return ListRetriever(
            [
                Hit(snippet_id=f"s{i}", corpus="notes", title="", text=t, rank=i + 1, score=1.0)
                for i, t in enumerate(texts)
            ]
        )

    at = page(path, answering(), **{"bench.methods": ["cot"]})
    assert not at.get("button_group") and not [b for b in at.button if b.key == "bench.check_corpora"]  # no retrieval
    at = page(path, answering(), **{"bench.methods": ["medrag"]})
    assert any("default corpora are the HPO phenotype definitions" in i.value for i in at.info)  # said up front
    off = page(path, answering(), **{"bench.methods": ["medrag"], RETRIEVER_OVERRIDE: corpus("spring weather")})
    assert "**Corpora searched** · notes" in "\n".join(m.value for m in off.markdown)
    off.button(key="bench.check_corpora").click().run()
    assert not off.exception
    assert off.warning[0].value.startswith("The corpora hold little on this benchmark's topics: 0 of 5 questions")
    assert off.text_input(key="bench.new_corpus")  # another corpus offered: a folder to add, or those indexed
    on = page(
        path,
        answering(),
        **{
            "bench.methods": ["medrag"],
            RETRIEVER_OVERRIDE: corpus(
                *(q["question"] for d in json.loads(path.read_text()).values() for q in d.values())
            ),
        },
    )
    on.button(key="bench.check_corpora").click().run()
    assert on.success[0].value.startswith("On topic: 5 of 5 questions found a passage on their topic")
