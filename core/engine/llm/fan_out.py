"""Calls a method makes together that start with the same long prompt (MASS-RAG's three views read the same
documents; Discuss-RAG's experts the same question and summary).

On a server with several slots each such call would read the shared prefix again in its own slot, and on a
few CPU cores reading is most of the cost. A ``FanOut`` holds the group's first calls until every member has
either reached the server or been answered from the response cache; then it looks at the prompts of those going
to the server. When most of each prompt is a long prefix they share, ``copy`` reads it once and copies it into
the slots that will answer them, and they run at once: the slots write together, which on a CPU yields more
tokens a second in all than one slot writing alone. Otherwise they run in turn, as one slot would serve them,
so each finds whatever an earlier call read (i-MedRAG's follow-up queries share their first documents, and come
back word for word in later rounds).
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TypeVar

Messages = list[dict[str, str]]
T = TypeVar("T")
R = TypeVar("R")

log = logging.getLogger(__name__)

# A member that waits longer than this for the rest of its group (one that is still retrieving, say) goes
# ahead on its own: the group then reads its prefix more than once, which costs time, never an answer.
GATHER_SECONDS = 10.0
# Reading the shared prefix once may take minutes on a few CPU cores; members wait that long at most.
PRIME_SECONDS = 600.0
# A copy overwrites the slots it goes to, and a slot (or the host cache) may hold far more of a call's prompt than
# the group shares (i-MedRAG asks the same follow-up queries again in later rounds): only a prefix of at least this
# many characters (about 125 tokens) that is at least this share of every call's prompt is copied.
MIN_SHARED_CHARS = 500
MIN_SHARED_PART = 0.5

_member = threading.local()


def chars(messages: Messages) -> int:
    return sum(len(str(m.get("content", ""))) for m in messages)


def common_prefix(group: list[Messages]) -> Messages:
    """The messages all of ``group`` start with: whole messages while they agree, then the longest shared start of
    the first message that differs, cut after its last line break so the prefix ends where a token does."""
    shared: Messages = []
    for items in zip(*group):
        first = items[0]
        if all(m == first for m in items):
            shared.append(first)
            continue
        if all(m.get("role") == first.get("role") for m in items):
            texts = [str(m.get("content", "")) for m in items]
            head = texts[0]
            for text in texts[1:]:
                n = next((i for i, (a, b) in enumerate(zip(head, text)) if a != b), min(len(head), len(text)))
                head = head[:n]
            cut = head.rfind("\n")
            if cut > 0:
                shared.append({**first, "content": head[: cut + 1]})
        break
    return shared


def prefix_to_copy(group: list[Messages]) -> Messages:
    """The prefix ``group`` shares when it is long enough, and enough of every prompt, to be read once and copied;
    otherwise none."""
    shared = common_prefix(group)
    enough = chars(shared) >= max(MIN_SHARED_CHARS, MIN_SHARED_PART * min(chars(m) for m in group))
    return shared if enough else []


class FanOut:
    """One group of ``size`` calls made at once. Each runs in its own thread as a member (``run``); the first
    call it makes to the model goes through ``call``, or says it was answered without the model (``skip``).
    ``copy(prefix, n)`` puts a prefix the group shares into ``n`` slots."""

    def __init__(self, size: int, copy: Callable[[Messages, int], object]):
        self._copy = copy
        self._left = size
        self._waiting: list[Messages] = []
        self._lock = threading.Lock()
        self._in_turn = False
        self._turn = threading.Lock()
        self._released = threading.Event()

    def run(self, fn: Callable[[T], R], item: T) -> R:
        """``fn(item)`` as a member of the group; a member that ends without calling the model counts as skipped."""
        _member.current = self
        try:
            return fn(item)
        finally:
            if getattr(_member, "current", None) is self:
                self.skip()
            _member.current = None

    @contextmanager
    def call(self, messages: Messages, cancel: threading.Event | None = None) -> Iterator[None]:
        """A member's first call to the model, made inside this block: it starts once the group's shared prefix
        is in the slots (the last member to arrive sets that going), or in its turn when the group runs in turn,
        and at once when the run is cancelled or waiting no longer pays."""
        self._arrive(messages, cancel)
        if not self._in_turn:
            yield
            return
        while not self._turn.acquire(timeout=0.25):
            if cancel is not None and cancel.is_set():
                yield
                return
        try:
            yield
        finally:
            self._turn.release()

    def _arrive(self, messages: Messages, cancel: threading.Event | None) -> None:
        self._count(messages)
        started = time.monotonic()
        while not self._released.wait(0.25):
            if cancel is not None and cancel.is_set():
                return
            waited = time.monotonic() - started
            if waited >= GATHER_SECONDS + PRIME_SECONDS or (waited >= GATHER_SECONDS and not self._waiting_for_prime()):
                return

    def skip(self) -> None:
        """A member whose first call was answered without the model (or that made none)."""
        self._count(None)

    def _count(self, messages: Messages | None) -> None:
        _member.current = None  # only a member's first call belongs to the group
        with self._lock:
            if messages is not None:
                self._waiting.append(messages)
            self._left -= 1
            last = self._left == 0
        if last:  # priming runs beside the members, so a cancelled run's members stop waiting within a second
            threading.Thread(target=self._release, name="prefix-share", daemon=True).start()

    def _waiting_for_prime(self) -> bool:
        with self._lock:
            return self._left == 0

    def _release(self) -> None:
        try:
            group = self._waiting
            if len(group) > 1:
                shared = prefix_to_copy(group)
                self._in_turn = not shared
                if shared:
                    self._copy(shared, len(group))
        except Exception:  # a copy that fails costs the group its shared reading, never its answers
            log.warning("could not share the prompt prefix of %d calls", len(self._waiting), exc_info=True)
        finally:
            self._released.set()


def take() -> FanOut | None:
    """The group the calling thread's next model call belongs to, if any."""
    return getattr(_member, "current", None)
