"""The studio's pages by section. A new screen is one module with a ``page()`` function and one line here."""

from __future__ import annotations

import streamlit as st

from ui.pages import ask, compare, history, settings, workshop


def sections() -> dict[str, list[st.Page]]:
    return {
        "Run": [
            st.Page(ask.page, title="Ask", icon=":material/chat:", url_path="ask", default=True),
            st.Page(compare.page, title="Compare", icon=":material/view_column:", url_path="compare"),
            st.Page(workshop.page, title="Workshop", icon=":material/co_present:", url_path="workshop"),
        ],
        "Review": [
            st.Page(history.page, title="History", icon=":material/history:", url_path="history"),
        ],
        "Setup": [
            st.Page(settings.page, title="Settings", icon=":material/settings:", url_path="settings"),
        ],
    }
