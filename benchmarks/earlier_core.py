"""This checkout's scripts on an earlier checkout's ``core``: before ``core`` had two floors, ``core.engine.llm`` was
``core.llm`` and ``core.studio.eval`` was ``core.eval``. ``under_todays_names()`` lets today's names import that
checkout's modules (the same module objects, so its classes stay one class), where it has no ``core.engine``."""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.util
import sys
import types

FLOORS = ("engine", "studio")


class _Floors(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    def find_spec(self, name, path, target=None):
        parts = name.split(".")
        if len(parts) >= 2 and parts[:1] == ["core"] and parts[1] in FLOORS:
            return importlib.util.spec_from_loader(name, self, is_package=True)
        return None

    def create_module(self, spec):
        rest = spec.name.split(".")[2:]
        if not rest:  # core.engine itself: a package whose submodules are the earlier core's
            floor = types.ModuleType(spec.name)
            floor.__path__ = []
            return floor
        return importlib.import_module(".".join(["core", *rest]))

    def exec_module(self, module):
        pass


def under_todays_names() -> None:
    if importlib.util.find_spec("core.engine") is None:
        sys.meta_path.insert(0, _Floors())
