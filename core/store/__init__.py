from core.store.runs import RunStore

__all__ = ["RunStore"]
