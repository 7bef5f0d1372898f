"""A parsed reply is shown in the order the model wrote it: an answer-first reply shows its letter first."""

from __future__ import annotations

from streamlit.testing.v1 import AppTest


def _replies():
    import streamlit as st

    from ui.runs.reply_fields import reply_fields

    reasoning = "the ECG shows an inferior STEMI and a PCI centre can take him within the hour"
    reply_fields({"answer": "B", "reasoning": reasoning, "cited_ids": ["stemi7"]})
    st.divider()
    reply_fields({"reasoning": reasoning, "answer": "B", "confidence": 0.9})
    st.divider()
    reply_fields({"claims": [{"claim": "aspirin first", "ids": ["a", "b"]}], "deep": {"x": {"y": 1}}})


def test_fields_keep_the_order_the_reply_wrote_them_in():
    at = AppTest.from_function(_replies).run()
    shown = [m.value for m in at.markdown]
    assert shown[0] == "**answer** `B`" and shown[1].startswith("**reasoning:** the ECG")
    assert shown[2] == "**cited ids:**\n- stemi7"
    assert shown[3].startswith("**reasoning:**") and shown[4] == "**answer** `B` · **confidence** `0.9`"
    assert shown[5] == "**claims:**\n- :gray[claim] aspirin first · :gray[ids] a, b" and shown[6] == "**deep:**"
    assert len(at.json) == 1
