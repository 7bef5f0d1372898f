"""Who is labelling: the logged-in user when the app has OpenID login configured (``[auth]`` in secrets.toml),
otherwise a name typed once per browser session. Every label stores it. On a shared studio a typed name is held by
the computer that first labels under it (``core.studio.labels.claims``), so nobody labels under someone else's name."""

from __future__ import annotations

import streamlit as st

from core.engine import paths
from core.studio.access import Mode
from core.studio.labels import LabelError, LabelStore, check_annotator
from core.studio.labels.claims import NameClaims
from ui.common import access, keys


@st.cache_resource(show_spinner=False)
def _labels(path: str) -> LabelStore:
    return LabelStore(path)


def label_store() -> LabelStore:
    return _labels(str(paths.db_path()))


def _login_configured() -> bool:
    """st.user carries ``is_logged_in`` only when an ``[auth]`` section exists in secrets.toml."""
    try:
        return "is_logged_in" in st.user
    except Exception:  # no script context (a bare test) or no secrets file: no login configured
        return False


def _logged_in_name() -> str | None:
    if not st.user.get("is_logged_in"):
        return None
    return str(st.user.get("email") or st.user.get("name") or st.user.get("sub") or "") or None


def current() -> str | None:
    """The annotator's name, or None while nobody is identified."""
    if _login_configured():
        return _logged_in_name()
    return st.session_state.get(keys.ANNOTATOR)


@st.cache_resource(show_spinner=False)
def _claims(path: str) -> NameClaims:
    return NameClaims(path)


def _take_name(typed: str) -> None:
    try:
        name = check_annotator(st.session_state.get(typed, ""))
        now = access.current()
        if now.mode is Mode.SHARED:
            name = _claims(str(paths.db_path())).take(name, access.client_key(), owner=now.owner)
        st.session_state[keys.ANNOTATOR] = name
        st.session_state.pop(keys.ANNOTATOR_PROBLEM, None)
    except LabelError as exc:
        st.session_state.pop(keys.ANNOTATOR, None)
        st.session_state[keys.ANNOTATOR_PROBLEM] = str(exc)


def _change_name() -> None:
    st.session_state.pop(keys.ANNOTATOR, None)


def identify(*, key: str = "annotate") -> str | None:
    """Draws who is labelling (or asks for it) and returns the name; None until someone is identified."""
    if _login_configured():
        name = _logged_in_name()
        if name is None:
            st.info("Log in to label: every label stores who gave it.")
            st.button("Log in", icon=":material/login:", key=f"{key}.login", on_click=st.login)
        else:
            st.caption(f"Labelling as **{name}** (logged in)")
        return name
    name = st.session_state.get(keys.ANNOTATOR)
    if name:
        left, right = st.columns([5, 1], vertical_alignment="center")
        left.caption(f"Labelling as **{name}** in this browser session")
        right.button("Change", key=f"{key}.change_name", on_click=_change_name)
        return name
    with st.form(f"{key}.who", border=False):  # one per trace on Compare: each has its own key
        st.text_input(
            "Your name (stored with every label)", key=keys.annotator_input(key), placeholder="e.g. Dr A. Rahman"
        )
        st.form_submit_button("Start labelling", on_click=_take_name, args=(keys.annotator_input(key),), type="primary")
    if problem := st.session_state.get(keys.ANNOTATOR_PROBLEM):
        st.error(problem)
    return None
