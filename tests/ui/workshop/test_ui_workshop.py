"""The Workshop page in AppTest: a recorded pack replayed step by step with no model, predictions and the reveal,
runs stepping together, saved runs, a live room followed by a participant, what-if side by side, and run files
in History."""

from __future__ import annotations

import pytest
from streamlit.testing.v1 import AppTest

from benchmarks.workshop_room_load import synthetic_run
from core.engine.llm.embedded import EmbeddedServer
from core.engine.runner import execute
from core.engine.store import RunStore
from core.engine.trace import Hit
from core.studio.rooms import RoomStore
from core.studio.runfiles import RunEntry, RunFile, export_to, import_file, import_runs
from core.studio.teaching import load_cases, load_passages
from core.studio.workshop import pack
from core.studio.workshop.carrier import carriers
from core.studio.workshop.replay import Replay
from tests.fakes import ListRetriever, ScriptedLLM
from tests.waiting import Gate, patience
from ui.common.jobs import live, runner
from ui.common.text import short

CASES = [c for c in load_cases() if c.id in ("stemi", "asthma")]
PAGE = "from ui.workshop.page import page\npage()"


def teaching_hits() -> list[Hit]:
    return [
        Hit(snippet_id=p.id, corpus="teaching_pack", title=p.title, text=p.content, rank=1, score=1.0)
        for p in load_passages()
        if p.case_id in ("stemi", "asthma")
    ]


def scripted() -> ScriptedLLM:
    return ScriptedLLM().on(
        "", lambda messages: {"reasoning": "The documents say so.", "answer": "B", "cited_ids": ["tp-stemi-o1"]}
    )


@pytest.fixture(scope="module")
def pack_folder(tmp_path_factory):
    folder = tmp_path_factory.mktemp("pack")
    pack.record(CASES, ["cot", "medrag"], llm=scripted(), retriever=ListRetriever(teaching_hits()), folder=folder)
    return folder


@pytest.fixture(autouse=True)
def use_pack(pack_folder, monkeypatch):
    monkeypatch.setenv("MEDRAG_WORKSHOP_PACK", str(pack_folder))


@pytest.fixture
def no_model(monkeypatch):
    """Fails the test if anything asks for the embedded model; afterwards no server exists that did not before."""
    before = EmbeddedServer.current()
    asked = []
    monkeypatch.setattr(EmbeddedServer, "get", classmethod(lambda cls, progress=None: asked.append(1) or 1 / 0))
    yield
    assert asked == [] and EmbeddedServer.current() is before


def workshop(query: dict | None = None) -> AppTest:
    at = AppTest.from_string(PAGE, default_timeout=30)
    for name, value in (query or {}).items():
        at.query_params[name] = value
    return at.run()


def param(at: AppTest, name: str) -> str:
    value = at.query_params[name]
    return value if isinstance(value, str) else value[0]


def text_of(at: AppTest) -> str:
    return "\n".join(m.value for m in at.markdown) + "\n".join(c.value for c in at.caption)


def test_a_pack_run_replays_step_by_step_then_reveals_with_the_key_and_never_starts_the_model(no_model):
    at = workshop()
    assert not at.exception
    at.multiselect(key="workshop.methods.stemi").set_value(["medrag"]).run()
    assert "Step 0 of 2 · the question" in at.get("progress")[0].proto.text
    assert "Final answer" not in text_of(at)  # nothing of the answer before the reveal
    at.radio(key=f"workshop.pick.{at.session_state['workshop.player'].runs[0]}").set_value("A").run()
    at.button(key="workshop.next").click().run()
    text = text_of(at)
    assert "Step 1 of 2 · retrieval" in at.get("progress")[0].proto.text and "retrieved **15** snippets" in text
    assert "Final answer" not in text and at.button(key="workshop.next").label == "Reveal the answer"
    trust = next(g for g in at.get("button_group") if g.proto.label.startswith("Snippets you would trust"))
    assert len(trust.proto.options) == 5  # the best five of the retrieval shown
    at.button(key="workshop.next").click().run()
    text = text_of(at)
    # the method's choice against the key and against the pick, each said in its own words; a personal tally first
    assert (
        "**MedRAG** chose **B** :green-badge[the teaching key] · you predicted **A**: :orange-badge[it chose otherwise]"
    ) in text
    assert "Your predictions: right for 0 of 1 method · the teaching key in 0 of your 1 pick." in text
    assert "**Teaching pack key: B.**" in text and "cited the outdated one" in text
    assert "since revised: Oxygen only when saturation is below 90%" in text
    assert text.index("Your predictions:") < text.index("**Question:**")  # at the top, above the replay
    assert at.button(key="workshop.next").disabled
    at.button(key="workshop.prev").click().run()
    assert "Step 1 of 2" in at.get("progress")[0].proto.text
    assert not at.exception
    run_id = at.session_state["workshop.player"].runs[0]
    assert not [r for r in at.radio if r.key == f"workshop.pick.{run_id}"]  # closed after the reveal
    assert "Predictions are closed: the answer has been revealed. Yours: MedRAG **A**." in text_of(at)


def test_two_methods_step_together_aligned_by_stage_and_a_stage_can_be_jumped_to(no_model):
    at = workshop()
    at.multiselect(key="workshop.methods.stemi").set_value(["cot", "medrag"]).run()
    assert "#### CoT" in text_of(at) and "#### MedRAG" in text_of(at)
    at.selectbox(key="workshop.jump").set_value("Retrieve / generate").run()
    assert "Step 1 of 2 · Retrieve / generate" in at.get("progress")[0].proto.text
    assert "No step of this stage: waiting for the others." in text_of(at)  # CoT waits while MedRAG retrieves
    assert at.selectbox(key="workshop.whatif.drop").label == "Snippet to drop from every retrieval"  # MedRAG's
    at.button(key="workshop.next").click().run()
    assert text_of(at).count("the teaching key]") == 2


def test_the_pack_cases_say_what_each_teaches():
    at = workshop()
    table = at.dataframe[0].value
    assert list(table["case"]) == [c.title for c in CASES]
    assert "spot the outdated advice: Oxygen therapy for all patients" in table["what it teaches"][0]
    assert list(table["recorded methods"]) == ["CoT, MedRAG", "CoT, MedRAG"]


def test_saved_and_imported_runs_replay_too(tmp_path):
    store = RunStore()
    run = execute("cot", CASES[0].to_question(), llm=scripted(), store=store)
    at = workshop()
    at.segmented_control(key="workshop.source").set_value("Saved and imported runs").run()
    at.multiselect(key="workshop.saved").set_value([run.id]).run()
    at.button(key="workshop.next").click().run()
    assert "**CoT** chose **B**" in text_of(at) and "Teaching pack key" in text_of(at)  # its case is recognised


def test_a_room_the_presenter_drives_and_a_participant_follows(no_model):
    presenter = workshop()
    presenter.multiselect(key="workshop.methods.stemi").set_value(["medrag"]).run()
    presenter.button(key="workshop.open_room").click().run()
    code = param(presenter, "room")
    assert "presenter" not in presenter.query_params  # the presenter's token stays in the session, off the screen
    assert f"Room <b>{code}</b>" in text_of(presenter) and "Nobody has joined yet." in text_of(presenter)
    assert f"/workshop?room={code}" in text_of(presenter) and presenter.get("image")  # the join link and its QR code
    stranger = workshop({"room": code})  # the same address without the session: a participant's join form
    assert not any(b.key == f"room.{code}.next" for b in stranger.button)

    guest = workshop({"room": code})
    guest.text_input(key="room.join.name").set_value("Ada")
    guest.button(key="FormSubmitter:room.join-Join").click().run()
    member = param(guest, "member")
    guest = workshop({"room": code, "member": member})  # a reload with the token rejoins
    assert "you are **Ada** in room" in text_of(guest) and "Step 0 of 2" in guest.get("progress")[0].proto.text
    run_id = RoomStore().room(code).run_ids[0]
    guest.radio(key=f"room.{code}.pick.{run_id}").set_value("C").run()
    assert RoomStore().tally(code).predictions == {run_id: {"C": 1}}

    presenter.run()
    assert "**1 of 1 participants** have picked an option" in text_of(presenter) and "In the room: Ada" in text_of(
        presenter
    )
    presenter.button(key=f"room.{code}.next").click().run()
    assert RoomStore().room(code).step == 1
    guest.run()
    assert "Step 1 of 2" in guest.get("progress")[0].proto.text
    presenter.button(key=f"room.{code}.next").click().run()  # the reveal
    guest.run()
    text = text_of(guest)
    assert "you predicted **C**: :orange-badge[it chose otherwise] · the room predicted C 1" in text
    assert "Your predictions: right for 0 of 1 method · the teaching key in 0 of your 1 pick." in text
    assert "Teaching pack key" in text
    presenter.button(key=f"room.{code}.prev").click().run()  # the presenter steps back to discuss
    guest.run()
    assert "Predictions are closed" in text_of(guest) and not [r for r in guest.radio if r.key.endswith(run_id)]


def test_a_trust_vote_tapped_as_the_presenter_moves_on_is_kept(no_model):
    """A participant taps a snippet on the step their screen shows while the presenter moves on: the page's poll has
    already redrawn the next step on the server when the tap arrives. The browser sends the widgets of the screen it
    shows, so the tap must land on the widget the server draws now (one per room, not one per step): on a widget of
    the step before, the vote was saved but the page showed it untapped, and the next tap took it back."""
    run, case_id = synthetic_run(6)
    import_runs(RunStore(), RunFile(kind="run", runs=[RunEntry(run=run, backend="synthetic", case_id=case_id)]), "test")
    replay = Replay([run])
    rooms = RoomStore()
    room, presenter = rooms.open_room(title="race", source="store", run_ids=[run.id], steps=len(replay))
    _, token = rooms.join(room.code, "Ada")
    step = next(s for s in range(replay.last) if replay.hits_shown(s))  # the first step with snippets to trust
    rooms.set_step(room.code, presenter, step)
    at = workshop({"room": room.code, "member": token})
    screen, [pills] = at._tree, at.pills  # what the participant's browser shows, and the widget tapped on it
    rooms.set_step(room.code, presenter, step + 1)
    at.run()  # the poll saw the presenter move: the server redraws the page at the next step
    assert f"Step {step + 1} of" in at.get("progress")[0].proto.text
    tapped = pills.options[0]  # shown by its title
    pills.set_value([tapped])
    at._run(screen.get_widget_states())  # the tap, sent with the widgets of the screen it was made on
    assert not at.exception
    [hit] = [h for h in replay.hits_shown(step) if short(h.title, 60) == tapped]
    assert rooms.tally(room.code).trust == {hit.snippet_id: (1, 0)}
    assert at.pills[0].value == [hit.snippet_id]  # and the page shows it kept, so the next tap keeps it too
    more = next(o for o in at.pills[0].options if o != tapped)
    at.pills[0].set_value([tapped, more]).run()
    assert len(rooms.tally(room.code).trust) == 2
    rooms.set_step(room.code, presenter, step)  # the presenter steps back: the vote still shows, nothing breaks
    at.run()
    assert not at.exception and hit.snippet_id in at.pills[0].value


def test_a_participant_sees_the_step_the_room_is_on_and_the_earlier_steps_on_request(no_model):
    run, case_id = synthetic_run(6)
    import_runs(RunStore(), RunFile(kind="run", runs=[RunEntry(run=run, backend="synthetic", case_id=case_id)]), "test")
    rooms = RoomStore()
    room, presenter = rooms.open_room(title="steps", source="store", run_ids=[run.id], steps=len(Replay([run])))
    rooms.set_step(room.code, presenter, 4)
    at = workshop({"room": room.code, "member": rooms.join(room.code, "Ada")[1]})
    assert "Earlier steps · 3 events (not shown)" in [c.value for c in at.caption]
    drawn = len(at.markdown)
    at.toggle(key=f"room.{room.code}.earlier").set_value(True).run()
    assert "Earlier steps · 3 events" in [c.value for c in at.caption] and len(at.markdown) > drawn + 5


def test_a_wrong_room_code_is_named():
    at = workshop({"room": "ABCDEF"})
    assert "no room has the code ABCDEF" in at.error[0].value


def start_what_if(gate: Gate | None = None) -> AppTest:
    """MedRAG's pack run of the first case, re-run with its first passage dropped, on a scripted model (whose calls
    wait at ``gate`` when given)."""
    at = AppTest.from_string(PAGE, default_timeout=30)
    at.session_state["llm_override"] = ScriptedLLM(gate=gate).on(
        "", lambda m: {"reasoning": "Without it.", "answer": "A", "cited_ids": []}
    )
    at.session_state["retriever_override"] = ListRetriever(teaching_hits())
    at.run()
    at.multiselect(key="workshop.methods.stemi").set_value(["medrag"]).run()
    at.button(key="workshop.next").click().run()
    at.selectbox(key="workshop.whatif.drop").set_value("tp-stemi-o1").run()
    return at.button(key="workshop.whatif.go").click().run()


def test_what_if_drops_a_snippet_re_runs_and_shows_both_runs(tmp_path):
    at = start_what_if()
    assert live(at.session_state["workshop.whatif"]).until_done(patience())
    at.run()
    text = text_of(at)
    assert "**What changed** when the re-run dropped tp\\-stemi\\-o1:" in text
    assert "Answer changed\\: B\\. Aspirin loading dose" in text and "→ A\\. High\\-flow oxygen" in text
    assert "The original run" in text and "The what-if re-run" in text
    store = RunStore()
    child = store.load_run(at.session_state["workshop.whatif"])
    parent = store.load_run(child.parent_id)  # the pack run went into History too
    assert parent.method == child.method == "medrag"
    hits = [h.snippet_id for e in child.events if e.kind == "retrieval" for h in e.payload.hits]
    assert "tp-stemi-o1" not in hits
    # a reload (a new session on the page's URL) finds it: in the server's runner, then, after a restart, the store
    assert param(at, "whatif") == child.id
    for restarted in (False, True):
        if restarted:
            runner.clear()
        again = workshop({"whatif": child.id})
        assert not again.exception and "The what-if re-run" in text_of(again)
        assert "Answer changed\\: B\\. Aspirin loading dose" in text_of(again)
    again.button(key="workshop.whatif.close").click().run()
    assert "whatif" not in again.query_params and "The what-if re-run" not in text_of(again)


def test_a_what_if_re_run_survives_a_reload_is_listed_in_history_and_stops_on_request():
    gate = Gate()  # the reader's call is held for good while the test reloads, lists and stops it
    at = start_what_if(gate)
    run_id = param(at, "whatif")
    assert at.status[0].label.startswith("What-if re-run of MedRAG (dropped tp-stemi-o1): ")
    reloaded = workshop({"whatif": run_id})  # a new session: nothing of the first in its state
    assert reloaded.status[0].label.startswith("What-if re-run of MedRAG (dropped tp-stemi-o1): ")
    assert f"Saved as it goes as run {run_id}" in text_of(reloaded)
    history = AppTest.from_string("from ui.history.page import page\npage()", default_timeout=30).run()
    listed = text_of(history)
    assert ":orange-badge[running] :gray-badge[what-if run] **MedRAG \\(dropped tp\\-stemi\\-o1\\)**" in listed
    assert history.button(key=f"history.stop.{run_id}").label == "Stop"
    reloaded.button(key="workshop.whatif.stop").click().run()
    # the held call is cut, not waited for: it is never let on
    assert live(run_id).until_done(patience()) and live(run_id).status == "stopped"
    assert RunStore().load_run(run_id).status == "cancelled"
    assert "The re-run was stopped before it finished" in text_of(reloaded.run())
    assert "The what-if re-run" in text_of(reloaded)


def test_history_offers_run_files_and_marks_imported_runs(tmp_path):
    here = RunStore(tmp_path / "elsewhere.sqlite")
    run = execute("cot", CASES[0].to_question(), llm=scripted(), store=here)
    export_to(here, [run.id], tmp_path / "one.json.gz")
    import_file(RunStore(), tmp_path / "one.json.gz")
    at = AppTest.from_string("from ui.history.page import page\npage()", default_timeout=30).run()
    assert not at.exception
    assert at.expander[0].label == "Run files: download runs, or import a file"
    at.selectbox(key="history.open").set_value(run.id).run()
    assert f"Run {run.id} was imported from **one\\.json\\.gz**" in text_of(at)


def test_a_method_that_never_retrieves_is_not_counted_against_the_cases_passages(no_model):
    at = workshop()  # CoT and MedRAG on the recorded STEMI case, straight to the reveal
    at.multiselect(key="workshop.methods.stemi").set_value(["cot", "medrag"]).run()
    at.button(key="workshop.next").click().run()
    at.button(key="workshop.next").click().run()
    text = text_of(at)
    assert (
        "**Where CoT met the case's passages:** retrieved nothing, so it met none of the case's passages"
        in text.replace("\\", "")
    )
    cot = [line for line in text.splitlines() if "CoT" in line and "passages" in line]
    assert cot and not any("met 0 of" in line for line in cot)
    assert "**Where MedRAG met the case's passages:** met 5 of 5 key passages" in text  # MedRAG's own tally stays


def test_which_snippet_carried_the_answer_is_predicted_then_revealed(no_model):
    at = workshop()
    at.multiselect(key="workshop.methods.stemi").set_value(["medrag"]).run()
    at.button(key="workshop.next").click().run()  # the retrieval: its snippets can be picked
    carrier = next(g for g in at.get("button_group") if g.proto.label.startswith("Which snippet will carry"))
    assert len(carrier.proto.options) == 5
    run = pack.load_pack()[0][0].runs["medrag"].run
    [top, second, *_] = carriers(run)  # the snippets behind the answer, by the evidence linker, the carrier first
    at.session_state["workshop.carrier"] = second.doc_id  # what the pills' callback keeps
    at.button(key="workshop.next").click().run()
    assert not any("answer was carried by" in m.value for m in at.markdown)  # the linker runs when asked for
    at.toggle(key="ws-carrier-reveal").set_value(True).run()
    line = next(m.value for m in at.markdown if "answer was carried by" in m.value)
    assert "**MedRAG**'s answer was carried by **" in line and f"{top.doc_id}" in line.replace("\\", "")
    assert ":orange-badge[you predicted another, its no. 2]" in line
