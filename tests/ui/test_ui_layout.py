"""Screens grouped by job: ``ui/common`` imports nothing else of ``ui``, ``ui/runs`` only ``common``, and a job
package only ``common``, ``runs`` and itself, so a job can change without touching another."""

from __future__ import annotations

import ast
from pathlib import Path

from core.engine.paths import REPO_ROOT

UI = REPO_ROOT / "ui"
JOBS = ("explore", "compare", "history", "benchmark", "annotate", "workshop", "settings")
MAY_IMPORT = {"common": {"common"}, "runs": {"common", "runs"}} | {job: {"common", "runs", job} for job in JOBS}


def ui_packages_imported(path: Path) -> set[str]:
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module and node.module.split(".")[0] == "ui":
            parts = node.module.split(".")
            found |= {parts[1]} if len(parts) > 1 else {alias.name for alias in node.names}
        elif isinstance(node, ast.Import):
            found |= {a.name.split(".")[1] for a in node.names if a.name.startswith("ui.")}
    return found


def test_every_screen_module_sits_in_a_package_of_the_layout():
    loose = {p.name for p in UI.glob("*.py")} - {"__init__.py", "navigation.py"}
    assert not loose, f"modules outside the packages: {sorted(loose)}"
    assert {p.name for p in UI.iterdir() if p.is_dir() and p.name != "__pycache__"} == set(MAY_IMPORT)


def test_packages_import_only_what_the_layout_allows():
    crossings = [
        f"{path.relative_to(REPO_ROOT)} imports ui.{name}"
        for package, allowed in MAY_IMPORT.items()
        for path in sorted((UI / package).glob("*.py"))
        for name in sorted(ui_packages_imported(path) - allowed)
    ]
    assert not crossings, "\n".join(crossings)
