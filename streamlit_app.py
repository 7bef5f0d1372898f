"""MedRAG Studio: run multi-agent medical RAG methods and watch their traces. ``streamlit run streamlit_app.py``"""

import streamlit as st

from core.engine.llm import ConfigError
from core.engine.llm.endpoint import check_environment
from core.engine.store.migrations import StoreError
from ui.common import access, index_status
from ui.common.chrome import ASSETS, frame
from ui.common.state import settings, store
from ui.navigation import sections
from ui.workshop import room as room_view

# a narrow sidebar leaves Compare its three columns at 1024 px
st.set_page_config(
    page_title="MedRAG Studio", page_icon=str(ASSETS / "icon.svg"), layout="wide", initial_sidebar_state=210
)
frame()
try:
    check_environment(settings())  # every setting, the access ones included: one that cannot be used is said here
    store()  # opened (and brought up to date) here, so a database it cannot use is said once, in words
except ConfigError as exc:
    st.error(
        f"**A setting cannot be used:** {exc}. Fix it in the environment or `.streamlit/secrets.toml` "
        "and reload the page.",
        icon=":material/settings_alert:",
    )
    st.stop()
except StoreError as exc:
    st.error(f"**The studio database cannot be used:** {exc}.", icon=":material/database:")
    st.stop()
now = access.current()
room_only = room_view.only_the_room(now)  # a participant: the room and nothing else
pages = st.navigation(sections(now), position="hidden" if room_only else "sidebar")
if room_only:
    room_view.only_the_room_style()
else:
    access.sidebar(now)
    index_status.sidebar()
pages.run()
