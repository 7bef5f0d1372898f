"""What every page shares: the logo, the stylesheet, the not-for-clinical-use notice and a page header."""

from __future__ import annotations

import base64
from functools import lru_cache

import streamlit as st

from core.engine.paths import REPO_ROOT

ASSETS = REPO_ROOT / "assets"
NOTICE = (
    ":material/health_and_safety: **For research and teaching, not for clinical use.** "
    "Answers come from language models and may be wrong; never use them to diagnose or treat a patient."
)


@lru_cache(maxsize=1)
def _stylesheet() -> str:
    return f"<style>{(ASSETS / 'studio.css').read_text(encoding='utf-8')}</style>"


@lru_cache(maxsize=2)
def _svg_url(name: str) -> str:
    """An image as the data URL Streamlit would make of the file, made once: given a path, it reads, searches and
    encodes the file again on every run of every page."""
    svg = (ASSETS / name).read_text(encoding="utf-8")
    return f"data:image/svg+xml;base64,{base64.b64encode(svg.encode()).decode()}"


def frame() -> None:
    """Drawn by streamlit_app.py before whichever page runs."""
    st.logo(_svg_url("logo.svg"), icon_image=_svg_url("icon.svg"), size="large")
    st.html(_stylesheet())
    st.markdown(f'<div class="notice">\n\n{NOTICE}\n\n</div>', unsafe_allow_html=True)


def header(title: str, lede: str) -> None:
    st.title(title)
    st.markdown(f'<div class="page-lede">{lede}</div>', unsafe_allow_html=True)
