"""The studio's pages by section. A new screen is one module with a ``page()`` function and one line here.

Every page has its own path, Ask included (``/ask?run=…`` is a link like any other): the app's root is a hidden
page that only sends the browser on to Ask, keeping any query parameters. Pages only the owner may use (Settings,
Benchmark) are left out of a visitor's navigation, and check again when they run.
"""

from __future__ import annotations

from collections.abc import Callable

import streamlit as st

from core.studio.access import Access, Action
from ui.annotate import page as annotate
from ui.benchmark import page as benchmark
from ui.common import access as session_access
from ui.compare import page as compare
from ui.explore import page as ask
from ui.history import page as history
from ui.settings import page as settings
from ui.workshop import page as workshop

ASK = st.Page(ask.page, title="Ask", icon=":material/chat:", url_path="ask")


def _home() -> None:
    st.switch_page(ASK, query_params=st.query_params.to_dict())


def owners_only(page: Callable[[], None], action: Action) -> Callable[[], None]:
    """The page, run only when this session may take ``action`` (asked again on every run of the page)."""

    def guarded() -> None:
        if session_access.allowed(action):
            page()

    guarded.__name__ = page.__name__
    return guarded


def sections(access: Access) -> dict[str, list[st.Page]]:
    run = [
        ASK,
        st.Page(compare.page, title="Compare", icon=":material/view_column:", url_path="compare"),
        st.Page(
            owners_only(benchmark.page, Action.BENCHMARK),
            title="Benchmark",
            icon=":material/leaderboard:",
            url_path="benchmark",
        )
        if access.may(Action.BENCHMARK)
        else None,
        st.Page(workshop.page, title="Workshop", icon=":material/co_present:", url_path="workshop"),
    ]
    found = {
        "": [st.Page(_home, title="MedRAG Studio", url_path="home", default=True, visibility="hidden")],
        "Run": [p for p in run if p is not None],
        "Review": [
            st.Page(history.page, title="History", icon=":material/history:", url_path="history"),
            st.Page(annotate.page, title="Annotate", icon=":material/rule:", url_path="annotate"),
        ],
    }
    if access.may(Action.SETTINGS):
        found["Setup"] = [
            st.Page(
                owners_only(settings.page, Action.SETTINGS),
                title="Settings",
                icon=":material/settings:",
                url_path="settings",
            )
        ]
    return found
