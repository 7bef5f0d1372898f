"""Session-state keys are declared once, in ``ui/common/keys.py``: no screen reaches into ``st.session_state`` with a
string of its own, a module constant of its own, or a widget key spelled out that another place reads."""

from __future__ import annotations

import ast

from core.engine.paths import REPO_ROOT
from ui.common import keys

UI = REPO_ROOT / "ui"
KEYS = UI / "common" / "keys.py"
DECLARED = {v for v in vars(keys).values() if isinstance(v, str) and not v.startswith("__")} - {keys.__doc__}


def _is_session_state(node: ast.AST) -> bool:
    return isinstance(node, ast.Attribute) and node.attr == "session_state"


def _accessed_keys(tree: ast.AST) -> list[ast.expr]:
    """The key expression of every read, write, test and removal on ``st.session_state``."""
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Subscript) and _is_session_state(node.value):
            found.append(node.slice)
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.args:
            if _is_session_state(node.func.value) and node.func.attr in ("get", "pop", "setdefault"):
                found.append(node.args[0])
        elif isinstance(node, ast.Compare) and any(isinstance(op, ast.In | ast.NotIn) for op in node.ops):
            if _is_session_state(node.comparators[0]):
                found.append(node.left)
    return found


def _module_strings(tree: ast.Module) -> set[str]:
    """Names a module binds to a string at its top level (a key constant of its own)."""
    names = set()
    for node in tree.body:
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.Constant) and isinstance(node.value.value, str):
            names |= {t.id for t in node.targets if isinstance(t, ast.Name)}
    return names


def bare_keys(source: str, where: str) -> list[str]:
    tree = ast.parse(source)
    own = _module_strings(tree)
    found = []
    for key in _accessed_keys(tree):
        strings = [n for n in ast.walk(key) if isinstance(n, ast.Constant | ast.JoinedStr)]
        if strings and not isinstance(key, ast.Call):
            found.append(f"{where}:{key.lineno} session_state[{ast.unparse(key)}]")
        elif isinstance(key, ast.Name) and key.id in own:
            found.append(f"{where}:{key.lineno} session_state[{key.id}] (a key constant of its own)")
    for node in ast.walk(tree):
        if isinstance(node, ast.keyword) and node.arg == "key" and isinstance(node.value, ast.Constant):
            if node.value.value in DECLARED:
                found.append(f"{where}:{node.value.lineno} key={node.value.value!r} (declared in ui/common/keys.py)")
    return found


def test_session_state_keys_come_from_the_keys_module():
    found = [
        line
        for path in sorted(UI.rglob("*.py"))
        if path != KEYS
        for line in bare_keys(path.read_text(encoding="utf-8"), str(path.relative_to(REPO_ROOT)))
    ]
    assert not found, "\n".join(found)


def test_the_check_catches_each_kind_of_bare_key():
    page = (
        "import streamlit as st\n"
        'MINE = "mine"\n'
        'st.session_state["a"] = 1\n'
        'st.session_state.get(f"b.{x}")\n'
        "st.session_state.pop(MINE, None)\n"
        '"c" in st.session_state\n'
        f'st.text_input("n", key="{keys.NEW_CORPUS}")\n'
        'st.text_input("n", key="only.a.widget")\n'
        "st.session_state[keys.ASK_RUN] = st.session_state.get(keys.kept(widget))\n"
    )
    found = bare_keys(page, "page.py")
    assert [line.split()[0] for line in found] == [f"page.py:{n}" for n in (3, 4, 5, 6, 7)], found
