"""The page titles the navigation lists for a visitor or the owner, by section, as ``st.navigation`` gets them."""

from __future__ import annotations

from streamlit.testing.v1 import AppTest

SCRIPT = (
    "import streamlit as st\nfrom core.studio.access import Access, Mode, Role\nfrom ui.navigation import sections\n"
    "st.session_state['pages'] = {{s: [p.title for p in ps] for s, ps in "
    "sections(Access(Mode.{mode}, Role.{role})).items()}}"
)


def navigation_titles(mode: str, role: str) -> dict[str, list[str]]:
    """e.g. ``navigation_titles("SHARED", "VISITOR")``."""
    return AppTest.from_string(SCRIPT.format(mode=mode, role=role), default_timeout=10).run().session_state["pages"]
