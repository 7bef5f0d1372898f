"""MedRAG Studio: run multi-agent medical RAG methods and watch their traces. ``streamlit run streamlit_app.py``"""

import streamlit as st

from ui.chrome import ASSETS, frame
from ui.pages import sections

# a narrow sidebar leaves Compare its three columns at 1024 px
st.set_page_config(page_title="MedRAG Studio", page_icon=str(ASSETS / "icon.svg"), layout="wide",
                   initial_sidebar_state=210)
frame()
st.navigation(sections()).run()
