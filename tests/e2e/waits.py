"""How long a browser test waits for anything, from one table scaled by one setting.

Every wait is for a condition; the table says how long it may take before the test fails, on a machine like the one
the suite was written on. ``MEDRAG_TEST_WAIT_SCALE`` (``tests/waiting.py``) multiplies every entry: 2 on a machine half as fast.
"""

from __future__ import annotations

import time
from collections.abc import Callable

from tests.waiting import scale, wait_until

# milliseconds, at scale 1
BASE = {
    "glance": 2_000,  # an immediate reaction of the page (a list opening on a click) before trying another way
    "redraw": 30_000,  # the page's answer to an input or a new page load: Playwright's default for every wait
    "app": 60_000,  # the app's server up and answering its health check
    "index": 300_000,  # an index opened or built (the teaching pack's, the test session's default corpus)
    "model": 1_200_000,  # the embedded model loaded and a whole small run of it, other work sharing the cores
}


def ms(name: str) -> int:
    """The wait called ``name`` in the table, in milliseconds, scaled."""
    return int(BASE[name] * scale())


def until(condition: Callable[[], object], what: str, wait: str = "redraw", page=None) -> object:
    """``condition()``'s first truthy value, checked every 50 ms; on timeout an AssertionError naming ``what`` and
    the wait. With a ``page``, it checks between Playwright's own waits, so the page's event handlers (a routed
    websocket) keep running meanwhile."""
    pause = time.sleep if page is None else (lambda seconds: page.wait_for_timeout(seconds * 1000))
    return wait_until(condition, what, BASE[wait] / 1000, 0.05, pause, f" ({wait!r} × {scale():g})")
