"""What-if from a replay: at any retrieval step, drop one of its snippets or pin another one in, and re-run the
method live (this needs the model); then the two answers and traces side by side with what changed."""

from __future__ import annotations

import streamlit as st

from core.engine.methods import get
from core.engine.trace import Hit, Retrieval, Run
from core.studio.access import Action
from core.studio.runfiles import RunFile, Variation, import_runs, provenance
from core.studio.teaching import ROLE_WORDS, TeachingCase
from core.studio.workshop.marks import teaching_marks
from core.studio.workshop.replay import Replay
from core.studio.workshop.whatif import WhatIfRun, what_changed
from ui.common import access as session_access
from ui.common import jobs, keys, state
from ui.common.knobs import method_label
from ui.common.links import linked
from ui.common.text import md, short
from ui.runs.display import load
from ui.runs.launch import admit, ensure_model, llm_for
from ui.runs.live_panel import status_box
from ui.runs.pace import before_run, during_run
from ui.runs.swimlanes import swimlanes
from ui.workshop.data import PACK, Chosen, pack

LINK = "whatif"  # ... and the URL's name for it (``/workshop?whatif=<id>``), so a reload finds it again


def _hit_label(hit: Hit) -> str:
    return f"#{hit.rank} · {short(hit.title or hit.snippet_id, 70)}"


def _pin_candidates(run: Run, retrieval: Retrieval, case: TeachingCase | None) -> dict[str, str]:
    """Snippet id -> label: the case's passages first (what the lesson is about), then the run's other hits."""
    shown = {h.snippet_id for h in retrieval.hits}
    found: dict[str, str] = {}
    if case is not None:
        for mark in teaching_marks(run, case):
            if mark.passage_id not in shown:
                found[mark.passage_id] = f"{ROLE_WORDS[mark.role]} · {short(mark.title, 60)}"
    for event in run.events:
        if isinstance(event.payload, Retrieval):
            for hit in event.payload.hits:
                if hit.snippet_id not in shown:
                    found.setdefault(hit.snippet_id, f"found elsewhere in the run · {short(hit.title, 60)}")
    return found


def panel(chosen: Chosen, replay: Replay, step: int, key: str) -> None:
    if not session_access.notice(Action.LIVE_RUN):
        return
    st.markdown(
        "Pick a retrieval shown so far, drop one of its snippets or pin one in, and re-run the method "
        "live with that change. The new run is saved and linked to this one."
    )
    retrieving = [
        i for i in range(len(replay.runs)) if any(isinstance(e.payload, Retrieval) for e in replay.events(step, i))
    ]
    if not retrieving:
        st.caption("No retrieval is shown yet at this step: step on to one (CoT does not retrieve).")
        return
    index = retrieving[0]
    if len(retrieving) > 1:
        index = st.selectbox(
            "Run", retrieving, key=f"{key}.run", format_func=lambda i: method_label(replay.runs[i].method)
        )
    run = replay.runs[index]
    retrievals = [e for e in replay.events(step, index) if isinstance(e.payload, Retrieval)]
    event = st.selectbox(
        "Retrieval",
        retrievals,
        key=f"{key}.retrieval.{run.id}",
        format_func=lambda e: f"step {replay.step_of(index, e.seq)} · {short(e.payload.query, 80)}",
    )
    retrieval: Retrieval = event.payload
    action = st.segmented_control(
        "Change", ["Drop a snippet", "Pin a snippet"], default="Drop a snippet", key=f"{key}.action"
    )
    if action == "Pin a snippet":
        candidates = _pin_candidates(run, retrieval, chosen.case)
        snippet = st.selectbox(
            "Snippet to pin at the top of every retrieval",
            list(candidates),
            index=None,
            key=f"{key}.pin",
            format_func=lambda i: candidates[i],
        )
        variation = Variation(pin=[snippet]) if snippet else None
    else:
        hits = {h.snippet_id: h for h in retrieval.hits}
        snippet = st.selectbox(
            "Snippet to drop from every retrieval",
            list(hits),
            index=None,
            key=f"{key}.drop",
            format_func=lambda i: _hit_label(hits[i]),
        )
        variation = Variation(drop=[snippet]) if snippet else None
    live = jobs.live(linked(LINK, keys.WORKSHOP_WHATIF))  # the re-run shown, also on the first draw after a reload
    busy = live is not None and not live.done
    if st.button(
        f"Re-run {method_label(run.method)} live with this change",
        icon=":material/science:",
        type="primary",
        disabled=variation is None or busy,
        key=f"{key}.go",
        help="Needs the model: the embedded one starts the first time (about a minute)",
    ):
        start(chosen, run, variation)
    before_run([get(run.method)], llm_for(session_access.current()), point_to_pack=False)


def start(chosen: Chosen, parent: Run, variation: Variation) -> None:
    access = session_access.current()
    if not session_access.allowed(Action.LIVE_RUN):
        return
    spec = get(parent.method)
    try:
        retriever = state.retriever_for(spec)
    except (OSError, ValueError, RuntimeError) as exc:
        st.error(f"The corpus could not be opened: {exc}")
        return
    if retriever is not None and set(parent.corpus) - set(retriever.corpora):
        st.warning(
            f"The run searched {', '.join(parent.corpus)}; the corpora open now are "
            f"{', '.join(retriever.corpora)}, so the re-run also differs by corpus."
        )
    if not ensure_model(access):
        return
    store = state.store()
    if chosen.source == PACK:  # the parent goes into History too, so the new run's link leads somewhere
        entry = pack()[2][parent.id]
        import_runs(store, RunFile(kind="run", runs=[entry]), f"workshop pack ({entry.case_id}.json.gz)")
    job = WhatIfRun(
        parent,
        variation,
        llm=llm_for(access),
        retriever=retriever,
        store=store,
        case_id=chosen.case.id if chosen.case else None,
        owner=session_access.client_key(),
    )
    if not admit(access, [job]):
        return
    session_access.started([job.id])
    st.session_state[keys.WORKSHOP_WHATIF] = job.id
    st.query_params[LINK] = job.id
    st.rerun()  # the panel is drawn inside the replay's fragment; the re-run's progress is drawn by the whole page


def progress() -> None:
    """Where the live re-run is (a fragment that polls every second, with Stop), then the two runs side by side.
    The re-run is the one named in the URL (a reload, a link) or else the one this tab last started; it is found
    in the server's job runner while it goes, in the store once it has ended."""
    run_id = linked(LINK, keys.WORKSHOP_WHATIF)
    if run_id is None:
        return
    live = jobs.runner().get(run_id, WhatIfRun)
    if live is not None and not live.done:
        st.fragment(_running, run_every=1.0)(live)
        return
    shown = (live.parent, live.run, live.variation) if live is not None and live.run else _saved(run_id)
    if shown is None:
        st.warning(
            f"No saved what-if re-run has the id “{run_id}”. It may have been deleted; History lists every saved run."
        )
        _close()
        return
    parent, child, variation = shown
    note, close = st.columns([5, 1], vertical_alignment="center")
    note.caption(
        (
            "The re-run was stopped before it finished: below is what it did until then. "
            if child.status == "cancelled"
            else ""
        )
        + f"Saved as run {child.id}."
    )
    close.button(
        "Close",
        icon=":material/close:",
        key="workshop.whatif.close",
        on_click=_close,
        width="stretch",
        help="Hides the what-if re-run here; History keeps it",
    )
    side_by_side(parent, child, variation)


def _saved(run_id: str) -> tuple[Run, Run, Variation] | None:
    """A re-run this server no longer holds (it restarted), with its parent and change, from the store."""
    child = load(run_id)
    parent = load(child.parent_id) if child is not None and child.parent_id else None
    variation = provenance.entry_for(state.store(), child).variation if parent is not None else None
    return (parent, child, variation) if variation is not None else None


def _close() -> None:
    st.session_state.pop(keys.WORKSHOP_WHATIF, None)
    st.query_params.pop(LINK, None)


def _running(live: WhatIfRun) -> None:
    if live.done:
        st.rerun()
    with status_box(
        f"What-if re-run of {method_label(live.parent.method)} ({live.variation.describe()}): {live.summary().text}",
        "running",
        expanded=False,
    ):
        for event in live.events[-3:]:
            st.caption(f"{event.stage} · {event.agent} · {event.kind}")
    if pace := during_run(live):
        st.caption(f":material/speed: {pace}")
    stop, note = st.columns([1, 4], vertical_alignment="center")
    with stop:
        jobs.stop_button([live], key="workshop.whatif.stop")
    note.caption(f"Saved as it goes as run {live.id}: a reload, or History's running list, finds it again.")


def side_by_side(parent: Run, child: Run, variation: Variation) -> None:
    """What changed, then the two runs as swimlanes: one row per common stage, the original and the re-run."""
    st.markdown(f"**What changed** when the re-run {md(variation.describe())}:")
    st.markdown("\n".join(f"- {md(line)}" for line in what_changed(parent, child).lines()))
    for column, run, title in zip(
        st.columns(2, gap="small"), (parent, child), ("The original run", "The what-if re-run")
    ):
        column.markdown(f"#### {title}")
        column.caption(f"{method_label(run.method)} · run {run.id} · [open in History](/history?run={run.id})")
    pinned = sorted(
        {
            short(h.title or h.snippet_id, 60)
            for e in child.events
            if isinstance(e.payload, Retrieval)
            for h in e.payload.hits
            if h.pinned
        }
    )
    if pinned:
        st.caption(f"Pinned at the top of every retrieval of the re-run: {', '.join(pinned)}")
    swimlanes([parent, child], key="whatif")
