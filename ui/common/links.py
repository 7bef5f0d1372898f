"""Links between pages that carry a query (``/history?run=…``, ``/compare?runs=…``, ``/ask?run=…``).

Streamlit knows a page by its URL path, so a link needs only the path, not the page's module.
"""

from __future__ import annotations

import streamlit as st


def _elsewhere() -> None:
    """Never runs: the link leads to the page registered under the same path."""


def page_link(url_path: str, label: str, *, icon: str | None = None, **query: str) -> None:
    st.page_link(st.Page(_elsewhere, title=label, url_path=url_path), label=label, icon=icon, query_params=query)


def linked(param: str, key: str) -> str | None:
    """What a page shows, by id: the one named in the URL wins (a link, a reload) and becomes this tab's, kept in
    ``st.session_state[key]``; otherwise this tab's, put back in the URL so a reload finds it again."""
    from_url = st.query_params.get(param)
    if from_url:
        st.session_state[key] = from_url
    elif st.session_state.get(key):
        st.query_params[param] = st.session_state[key]
    return st.session_state.get(key)
