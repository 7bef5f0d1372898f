"""MedRAG Studio: run multi-agent medical RAG methods and watch their traces. ``streamlit run streamlit_app.py``"""

import streamlit as st

from ui import index_status
from ui.chrome import ASSETS, frame
from ui.pages import sections

st.set_page_config(page_title="MedRAG Studio", page_icon=str(ASSETS / "icon.svg"), layout="wide")
frame()
index_status.sidebar()
st.navigation(sections()).run()
