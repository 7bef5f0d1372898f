"""Settings › Corpora, the papers' corpora by name (``core.engine.retrieval.named``): what getting one takes is said
first (bytes, time, whether the in-process index holds it), then it is downloaded from the Hugging Face Hub and
indexed as an index-build job of the server's runner, whose progress bar the Corpora section above follows. A corpus
got this way joins the list above, checked."""

from __future__ import annotations

import streamlit as st

from core.engine.retrieval.background import BackgroundBuild
from core.engine.retrieval.corpus import CorpusError
from core.engine.retrieval.named import CATALOG, get, plan, status
from ui.common import jobs, keys
from ui.common.corpora import add_corpus


def _job_id(name: str) -> str:
    return f"corpus get: {name}"


def _start(name: str) -> None:
    def make() -> BackgroundBuild:
        return BackgroundBuild(lambda progress: get(name, progress=progress), f"Get {name}", job_id=_job_id(name))

    st.session_state[keys.INDEX_BUILD] = jobs.again_if_failed(_job_id(name), BackgroundBuild, make).id
    st.session_state.pop(keys.NAMED_PLAN, None)


def _adopt_finished() -> None:
    """Corpora a finished job got join the list above (once; the page is drawn again to show them there)."""
    listed = st.session_state.get(keys.CORPUS_PATHS, [])
    added = False
    for name in CATALOG:
        job = jobs.runner().get(_job_id(name), BackgroundBuild)
        if job is None or not job.done or job.error:
            continue
        for path in job.result.paths:
            if str(path) not in listed and add_corpus(str(path)) is None:
                added = True
    if added:
        st.rerun()


def _check(name: str) -> None:
    try:
        p = plan(name)
        st.session_state[keys.NAMED_PLAN] = (name, p.lines(), p.fits)
    except CorpusError as exc:  # offline, or a corpus the user must fetch first: the message says what to do
        st.session_state[keys.NAMED_PLAN] = (name, [str(exc)], False)


def named_corpora_section() -> None:
    st.subheader("The papers' corpora")
    st.caption(
        "MedRAG's MedCorp, as the papers searched it: Textbooks, PubMed and Wikipedia are downloaded from the "
        "Hugging Face Hub (`HF_ENDPOINT`), each file checked against the Hub's checksum; StatPearls you fetch "
        "yourself (the steps are shown); MedQuAD and OpenStax come from the shared corpora folder. The same as "
        "`python -m core corpora get NAME`."
    )
    _adopt_finished()
    name = st.selectbox(
        "Corpus",
        list(CATALOG),
        key=keys.NAMED_CORPUS,
        format_func=lambda n: f"{n} · {CATALOG[n].snippets:,} snippets",  # what it is; whether it is here, below
    )
    st.caption(f"{CATALOG[name].title}. Here: {status(CATALOG[name])}.")
    st.button(
        "Check what it takes",
        icon=":material/fact_check:",
        key="settings.named_check",
        on_click=_check,
        args=(name,),
        help="Lists the files on the Hub (size, checksum) and says the time and memory it needs; fetches nothing",
    )
    shown = st.session_state.get(keys.NAMED_PLAN)
    if not shown or shown[0] != name:
        return
    _, lines, fits = shown
    st.code("\n".join(lines), language=None, wrap_lines=True)
    going = jobs.runner().get(_job_id(name), BackgroundBuild)
    st.button(
        f"Download and index {name}",
        icon=":material/download:",
        key="settings.named_get",
        on_click=_start,
        args=(name,),
        disabled=not fits or (going is not None and not going.done),
    )
