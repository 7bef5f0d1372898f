"""The studio's pages by section. A new screen is one module with a ``page()`` function and one line here.

Every page has its own path, Ask included (``/ask?run=…`` is a link like any other): the app's root is a hidden
page that only sends the browser on to Ask, keeping any query parameters.
"""

from __future__ import annotations

import streamlit as st

from ui.pages import annotate, ask, benchmark, compare, history, settings, workshop

ASK = st.Page(ask.page, title="Ask", icon=":material/chat:", url_path="ask")


def _home() -> None:
    st.switch_page(ASK, query_params=st.query_params.to_dict())


def sections() -> dict[str, list[st.Page]]:
    return {
        "": [st.Page(_home, title="MedRAG Studio", url_path="home", default=True, visibility="hidden")],
        "Run": [
            ASK,
            st.Page(compare.page, title="Compare", icon=":material/view_column:", url_path="compare"),
            st.Page(benchmark.page, title="Benchmark", icon=":material/leaderboard:", url_path="benchmark"),
            st.Page(workshop.page, title="Workshop", icon=":material/co_present:", url_path="workshop"),
        ],
        "Review": [
            st.Page(history.page, title="History", icon=":material/history:", url_path="history"),
            st.Page(annotate.page, title="Annotate", icon=":material/rule:", url_path="annotate"),
        ],
        "Setup": [
            st.Page(settings.page, title="Settings", icon=":material/settings:", url_path="settings"),
        ],
    }
