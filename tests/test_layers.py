"""Layers go one way, read from the code's own imports (``ast``, every import in a file, inside functions and
``TYPE_CHECKING`` blocks too): ``core`` never imports the screens, the measurement scripts or the docs generator; the
engine (``core/engine``) never imports a studio feature (``core/studio``); retrieval serves the methods and never
imports them; the store and its migrations sit under everything that makes runs. ``core/`` itself holds the two
floors and the command line's door, nothing loose; and nothing the product runs reads the benchmarks' own results."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
CORE = REPO / "core"

# (modules under this name, may not import modules under these names, why)
RULES: list[tuple[str, tuple[str, ...], str]] = [
    ("core", ("streamlit", "ui", "benchmarks", "tools"), "core never imports the screens, benchmarks or tools"),
    ("core.engine", ("core.studio",), "the engine knows nothing of the studio"),
    ("core.engine.retrieval", ("core.engine.methods",), "retrieval serves the methods, never imports them"),
    (
        "core.engine.store",
        ("core.engine.llm", "core.engine.retrieval", "core.engine.methods", "core.engine.runner", "core.engine.jobs"),
        "the store keeps runs; what makes them stands above it",
    ),
    ("core.engine.store.migrations", ("core",), "a migration is a fact of the files it wrote: it imports no code"),
]


def module_of(path: Path) -> str:
    parts = path.relative_to(REPO).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imported(path: Path) -> Iterator[tuple[int, list[str]]]:
    """(line, modules) for every import in the file; ``from a import b`` names ``a`` and ``a.b`` (b may be a module)."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    package = module_of(path).split(".") if path.name == "__init__.py" else module_of(path).split(".")[:-1]
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            yield node.lineno, [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:  # relative: the package itself, or one of its parents
                base = ".".join([*package[: len(package) - node.level + 1], *([base] if base else [])])
            yield node.lineno, [base, *(f"{base}.{alias.name}" for alias in node.names)]


def under(name: str, prefix: str) -> bool:
    return name == prefix or name.startswith(prefix + ".")


def violations(root: Path = CORE) -> list[str]:
    found = []
    for path in sorted(root.rglob("*.py")):
        module = module_of(path)
        for line, names in imported(path):
            for scope, banned, why in RULES:
                if under(module, scope) and (bad := [n for n in names if any(under(n, b) for b in banned)]):
                    found.append(f"{path.relative_to(REPO)}:{line}: {module} imports {bad[0]} ({why})")
    return found


def test_every_import_in_core_goes_down_its_floors():
    found = violations()
    assert not found, "imports against the layers:\n" + "\n".join(found)


def test_core_holds_the_two_floors_and_nothing_loose():
    loose = {p.name for p in CORE.iterdir() if p.name != "__pycache__"}
    assert loose == {"__init__.py", "__main__.py", "engine", "studio"}, "give each module a floor: " + ", ".join(
        sorted(loose - {"__init__.py", "__main__.py", "engine", "studio"})
    )


def reads_benchmark_results(path: Path) -> list[int]:
    """Lines where code (not a docstring) names the benchmarks' folder as a path."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    docstrings = {
        id(node.body[0].value)
        for node in ast.walk(tree)
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef)
        and node.body
        and isinstance(node.body[0], ast.Expr)
        and isinstance(node.body[0].value, ast.Constant)
    }
    return [
        node.lineno
        for node in ast.walk(tree)
        if isinstance(node, ast.Constant)
        and isinstance(node.value, str)
        and id(node) not in docstrings
        and (node.value == "benchmarks" or "benchmarks/results" in node.value)
    ]


def test_nothing_the_product_runs_reads_the_benchmarks_results():
    """A script's output is not a contract: what the studio shows of a measurement has its own typed file."""
    files = [REPO / "streamlit_app.py", *CORE.rglob("*.py"), *(REPO / "ui").rglob("*.py")]
    found = [f"{p.relative_to(REPO)}:{line}" for p in files for line in reads_benchmark_results(p)]
    assert not found, "reads benchmarks/results/: " + ", ".join(found)
