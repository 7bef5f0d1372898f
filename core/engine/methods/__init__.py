"""The method registry: every module here that defines ``SPEC`` is a method the UI and CLI offer."""

from __future__ import annotations

import importlib
import pkgutil
from functools import lru_cache

from core.engine.methods.contract import MethodParams, MethodSpec, RunContext

# Display order: baselines first, then the multi-agent methods.
ORDER = ["cot", "medrag", "imedrag", "discuss", "sema", "medrgag", "mass"]


@lru_cache(maxsize=1)
def registry() -> dict[str, MethodSpec]:
    specs = {}
    for info in pkgutil.iter_modules(__path__):
        module = importlib.import_module(f"{__name__}.{info.name}")
        spec = getattr(module, "SPEC", None)
        if isinstance(spec, MethodSpec):
            specs[spec.name] = spec
    rank = {name: i for i, name in enumerate(ORDER)}
    return dict(sorted(specs.items(), key=lambda kv: (rank.get(kv[0], len(ORDER)), kv[0])))


def get(name: str) -> MethodSpec:
    methods = registry()
    if name not in methods:
        raise KeyError(f"unknown method {name!r}; choose one of: {', '.join(methods)}")
    return methods[name]


__all__ = ["MethodParams", "MethodSpec", "RunContext", "registry", "get"]
