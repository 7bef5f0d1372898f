"""Reading an agent's reply while it is still being written: the fields of a JSON object so far.

The model writes structured replies as JSON, a few tokens at a time; a screen wants the fields that exist so far,
each as far as it goes, not a raw prefix like ``{"reasoning": "The ECG sh``. ``json_repair`` closes what is open
(``stream_stable`` keeps a field's value from jumping as more text arrives).
"""

from __future__ import annotations

from typing import Any

import json_repair

_LITERALS = ("true", "false", "null")


def partial_fields(text: str) -> dict[str, Any] | None:
    """The reply's fields so far, or None when it is not a JSON object (plain prose, or nothing yet)."""
    start = text.lstrip()
    if not start.startswith("{"):
        return None
    try:
        found = json_repair.repair_json(start, return_objects=True, stream_stable=True)
    except (ValueError, RecursionError):  # a reply the repairer cannot follow is shown as text
        return None
    if not isinstance(found, dict):  # only a key is being written so far
        return {}
    if found:  # a literal half written (`"sufficient": fal`) is not a string: leave it out until it is whole
        last, value = next(reversed(found.items()))
        after = start[start.rfind(":") + 1 :].strip()
        if isinstance(value, str) and not after.startswith('"') and any(w.startswith(value) for w in _LITERALS):
            found.pop(last)
    return found
