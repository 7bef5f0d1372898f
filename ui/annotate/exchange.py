"""Labels out (TREC qrels, CSV, JSONL: everyone's, so the owner's) and in (a qrels, CSV or JSONL file written here or
elsewhere: under the importer's own name, or, for the owner who asks, under the names in the file)."""

from __future__ import annotations

from collections.abc import Callable
from functools import partial

import streamlit as st

from core.studio.access import Action
from core.studio.labels import LabelError, PoolQuestion
from core.studio.labels.exchange import export
from core.studio.labels.importing import FORMATS, Importer, guess_format, import_labels, parse
from ui.common import access
from ui.common.annotator import label_store

MIME = {"qrels": "text/plain", "csv": "text/csv", "jsonl": "application/jsonl"}
NAMES = {"qrels": "labels.qrels", "csv": "labels.csv", "jsonl": "labels.jsonl"}


def _export(fmt: str, questions: Callable[[], list[PoolQuestion]]) -> str:
    access.current().require(Action.EXPORT_LABELS)  # asked again when the file is made, not only when offered
    return export(fmt, questions(), label_store())


def exchange(questions: Callable[[], list[PoolQuestion]], annotator: str | None) -> None:
    """``questions`` gives every pooled question (called only when a file is written or read); ``annotator`` is who
    is labelling in this session (None until they say)."""
    st.markdown(
        "**Export** every label in the studio. qrels gives one grade per snippet (`question_id 0 "
        "snippet_id grade`: the adjudicated label, else the majority); CSV and JSONL keep every annotator's "
        "label, note and time, with the question and passage text."
    )
    if access.notice(Action.EXPORT_LABELS):
        columns = st.columns(len(FORMATS))
        for column, fmt in zip(columns, FORMATS):
            column.download_button(
                f"Download {fmt}",
                partial(_export, fmt, questions),
                NAMES[fmt],
                MIME[fmt],
                icon=":material/download:",
                key=f"annotate.export.{fmt}",
                width="stretch",
            )
    st.divider()
    owner = access.current().may(Action.REPLACE_LABELS)
    st.markdown(
        "**Import** labels from a qrels, CSV or JSONL file. The whole file is checked before anything is "
        "written; bad lines are named by number. Labels are added or changed only under your own name"
        + (", unless you import under the names in the file." if owner else ".")
    )
    if annotator is None and not owner:
        st.info("Type your name above first: an import adds labels under it.")
        return
    upload = st.file_uploader("Label file", type=["qrels", "txt", "csv", "jsonl", "json"], key="annotate.upload")
    if upload is None:
        return
    fmt = st.selectbox("Format", FORMATS, index=FORMATS.index(guess_format(upload.name)), key="annotate.import_fmt")
    replace = owner and st.checkbox(
        "Import under the names in the file (adds to and changes other annotators' labels and adjudications)",
        key="annotate.replace",
    )
    who = annotator
    if fmt == "qrels" and replace:
        who = st.text_input(
            "Whose judgments are these?",
            value=f"qrels {upload.name.rsplit('.', 1)[0]}",
            key="annotate.import_who",
            help="a qrels file has no annotator column",
        )
    elif fmt == "qrels" and annotator:
        st.caption(f"A qrels file names no annotator: its grades come in as **{annotator}**'s.")
    skip_bad = st.checkbox("Import the good lines even if some lines are bad", key="annotate.skip_bad")
    if not st.button("Import", type="primary", icon=":material/upload:", key="annotate.import"):
        return
    if replace and not access.allowed(Action.REPLACE_LABELS):
        return
    if not replace and annotator is None:
        st.error("Type your name above first (an import adds labels under it), or import under the names in the file.")
        return
    upload.seek(0)
    try:
        parsed = parse(fmt, upload, who)
        report = import_labels(
            label_store(),
            questions(),
            parsed,
            source=f"import {upload.name}",
            importer=Importer(annotator or "", replace=replace),
            skip_bad=skip_bad,
        )
    except LabelError as exc:
        st.error(f"{upload.name}: {exc}. Nothing was imported.")
        return
    ok = report.written is not None and not report.parsed.errors
    (st.success if ok else st.error if report.refused else st.warning)(report.describe().replace("\n", "  \n"))
