"""The Corpora part of Settings: where retrieval runs (today's in-process index or Qdrant, from
``MEDRAG_SEARCH_URL``), which corpora the methods search, their sizes and index status, and building their indexes
(or ingesting them into Qdrant) as a job of the server's runner (``index_status``), followed with a progress bar."""

from __future__ import annotations

from pathlib import Path

import streamlit as st

from core.engine.paths import REPO_ROOT
from core.engine.retrieval import CorpusError, CorpusInfo, describe_corpora
from core.engine.retrieval.default_corpus import ensure_default_corpus
from core.engine.retrieval.location import SEARCH_URL, InProcess, search_location
from ui.common import index_status, keys, state

# The index status is on each corpus's line above; the table keeps the figures narrow enough for a 1024-px window,
# the long path last.
_COLUMNS = {
    "corpus": st.column_config.TextColumn(pinned=True),
    "snippets": st.column_config.NumberColumn(width="small", format="localized"),
    "chunked": st.column_config.NumberColumn(width="small", help="long passages split into chunks", format="localized"),
    "corpus MB": st.column_config.NumberColumn(width="small", format="%.1f"),
    "index MB": st.column_config.NumberColumn(width="small", format="%.1f"),
    "built in": st.column_config.NumberColumn(width="small", format="%.0f s"),
    "vectors": st.column_config.TextColumn(width="small", help="the precision the snippets were encoded in"),
}


def _mb(n: int) -> float:
    return n / 2**20


def _status(info: CorpusInfo) -> str:
    if info.ingested is not None:
        return f"ingest stopped at {info.ingested:,} of {info.snippets:,}: resume"
    if info.built:
        return f"built ({info.index_type})" if info.index_type else "built"
    return "stale: rebuild" if info.stale else "not built"


def _describe(paths: list[Path] | None) -> tuple[list[CorpusInfo], str | None]:
    """Corpora and their status (``None``: the default corpus, its generated part written first if missing),
    or the reason they cannot be read."""
    try:
        return describe_corpora(ensure_default_corpus() if paths is None else paths), None
    except (CorpusError, OSError) as exc:
        return [], str(exc)


def add_corpus(typed: str) -> str | None:
    """Adds the corpus at ``typed`` to the list, enabled, or says why it cannot."""
    found, problem = _describe([Path(typed)])
    if problem:
        return problem
    added = st.session_state.setdefault(keys.CORPUS_PATHS, [])
    chosen = st.session_state.get(keys.CORPORA)  # None: every listed corpus is on, the new one too
    for path in (str(info.path) for info in found):
        if path not in added:
            added.append(path)
        if chosen is not None and path not in chosen:
            chosen.append(path)
    return None


def use_only(paths: list[str]) -> None:
    """The methods search these corpora, and only these, from now on (Settings lists them checked)."""
    added = st.session_state.setdefault(keys.CORPUS_PATHS, [])
    added.extend(p for p in paths if p not in added)
    st.session_state[keys.CORPORA] = list(paths)


def known_corpora() -> list[CorpusInfo]:
    """Every corpus this studio knows of besides the default: those added in Settings, and the shared corpora
    folder beside a development checkout; each with whether its index is built."""
    shared = REPO_ROOT.parent / "shared" / "data" / "corpora"
    paths = [Path(p) for p in st.session_state.get(keys.CORPUS_PATHS, [])] + sorted(shared.glob("*.jsonl*"))
    found, _ = _describe(paths) if paths else ([], None)
    return list({str(info.path): info for info in found}.values())


def _add_corpus() -> None:
    typed = st.session_state.get(keys.NEW_CORPUS, "").strip()
    if not typed:
        return
    if problem := add_corpus(typed):
        st.session_state[keys.CORPUS_PROBLEM] = problem
        return
    st.session_state[keys.NEW_CORPUS] = ""
    st.session_state.pop(keys.CORPUS_PROBLEM, None)


def _where() -> bool:
    """Says where retrieval runs; False when that place cannot be reached (the rest of the section waits for it)."""
    where = search_location()
    how = (
        f"Set `{SEARCH_URL}` to a Qdrant server's URL (or a folder) to search a Qdrant collection instead."
        if isinstance(where, InProcess)
        else f"Chosen by `{SEARCH_URL}`; empty searches the in-process index."
    )
    try:
        where.check()
        st.caption(f"Search backend: **{where.label}**. {how}")
    except CorpusError as exc:
        st.error(f"The search backend cannot be reached: {exc}. Start it, or change `{SEARCH_URL}` and restart.")
        return False
    return True


def corpora_section() -> None:
    if not _where():
        return
    with st.spinner("Preparing the default corpus…"):
        defaults, problem = _describe(None)
    if problem:
        st.error(f"The default corpus cannot be read: {problem}")
    added, _ = _describe([Path(p) for p in st.session_state.get(keys.CORPUS_PATHS, [])])
    corpora = defaults + [info for info in added if info.path not in {d.path for d in defaults}]
    chosen = st.session_state.get(keys.CORPORA)
    enabled = []
    for info in corpora:
        on = st.checkbox(
            f"**{info.name}** · {info.snippets:,} snippets · {_status(info)}",
            value=chosen is None or str(info.path) in chosen,
            key=f"settings.corpus.{info.path}",
            help=info.description or str(info.path),
        )
        if on:
            enabled.append(str(info.path))
    if corpora:
        st.session_state[keys.CORPORA] = None if enabled == [str(d.path) for d in defaults] else enabled
        st.dataframe(
            [
                {
                    "corpus": i.name,
                    "snippets": i.snippets,
                    "chunked": i.split_passages if i.built else None,
                    "corpus MB": _mb(i.corpus_bytes),
                    "index MB": _mb(i.index_bytes) if i.index_bytes else None,
                    "built in": i.build_seconds or None,
                    "vectors": i.embed_precision or "—",
                    "licence": i.license or "—",
                    "path": str(i.path),
                }
                for i in corpora
            ],
            hide_index=True,
            key="settings.corpora_table",
            column_config=_COLUMNS,
        )
    if corpora and not enabled:
        st.warning("No corpus is enabled: methods that retrieve will not run until you enable one.")
    st.text_input(
        "Add a corpus: a .jsonl / .jsonl.gz file or a folder of them (MedRAG chunk format)",
        key=keys.NEW_CORPUS,
        placeholder="/data/corpora/statpearls",
        on_change=_add_corpus,
    )
    if problem := st.session_state.get(keys.CORPUS_PROBLEM):
        st.error(problem)
    selection = state.corpus_selection()
    ready = state.retriever_pool().is_open(selection)
    missing = (
        "Ingest missing corpora into Qdrant"
        if not isinstance(search_location(), InProcess)
        else ("Build missing indexes")
    )
    label = "Corpora are open" if ready else f"{missing} and open the corpora"
    building = index_status.building(selection)
    if st.button(label, icon=":material/build:", key="settings.build", disabled=ready or building or selection == ()):
        st.session_state[keys.INDEX_BUILD] = index_status.index_build(selection, again=True).id
    index_status.follow_build()
