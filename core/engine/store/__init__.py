from core.engine.store.runs import RunStore

__all__ = ["RunStore"]
