"""Labels out (TREC qrels, CSV, JSONL) and in (a qrels, CSV or JSONL file written here or elsewhere)."""

from __future__ import annotations

from collections.abc import Callable
from functools import partial

import streamlit as st

from core.labels import LabelError, PoolQuestion
from core.labels.exchange import FORMATS, export, guess_format, import_labels, parse
from ui.annotator import label_store

MIME = {"qrels": "text/plain", "csv": "text/csv", "jsonl": "application/jsonl"}
NAMES = {"qrels": "labels.qrels", "csv": "labels.csv", "jsonl": "labels.jsonl"}


def exchange(questions: Callable[[], list[PoolQuestion]]) -> None:
    """``questions`` gives every pooled question (called only when a file is written or read)."""
    st.markdown("**Export** every label in the studio. qrels gives one grade per snippet (`question_id 0 "
                "snippet_id grade`: the adjudicated label, else the majority); CSV and JSONL keep every annotator's "
                "label, note and time, with the question and passage text.")
    columns = st.columns(len(FORMATS))
    for column, fmt in zip(columns, FORMATS):
        column.download_button(f"Download {fmt}", partial(lambda f: export(f, questions(), label_store()), fmt),
                               NAMES[fmt], MIME[fmt], icon=":material/download:", key=f"annotate.export.{fmt}",
                               width="stretch")
    st.divider()
    st.markdown("**Import** labels from a qrels, CSV or JSONL file. The whole file is checked before anything is "
                "written; bad lines are named by number.")
    upload = st.file_uploader("Label file", type=["qrels", "txt", "csv", "jsonl", "json"], key="annotate.upload")
    if upload is None:
        return
    fmt = st.selectbox("Format", FORMATS, index=FORMATS.index(guess_format(upload.name)), key="annotate.import_fmt")
    who = None
    if fmt == "qrels":
        who = st.text_input("Whose judgments are these?", value=f"qrels {upload.name.rsplit('.', 1)[0]}",
                            key="annotate.import_who", help="a qrels file has no annotator column")
    skip_bad = st.checkbox("Import the good lines even if some lines are bad", key="annotate.skip_bad")
    if not st.button("Import", type="primary", icon=":material/upload:", key="annotate.import"):
        return
    try:
        text = upload.getvalue().decode("utf-8")
        report = import_labels(label_store(), questions(), parse(fmt, text, who), source=f"import {upload.name}",
                               skip_bad=skip_bad)
    except UnicodeDecodeError:
        st.error(f"{upload.name} is not UTF-8 text; nothing was imported.")
        return
    except LabelError as exc:
        st.error(f"{upload.name}: {exc}")
        return
    (st.success if report.written is not None and not report.parsed.errors else st.warning)(
        report.describe().replace("\n", "  \n"))
