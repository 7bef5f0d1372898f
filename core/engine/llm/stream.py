"""One chat completion, streamed by a worker thread, so that the caller can stop it at any moment.

The caller waits on the worker's chunks a fraction of a second at a time and checks its cancel event and its time limit in
between, so a cancelled call returns at once even while the endpoint is still reading a long prompt, and no call
outlasts its limit however steadily its chunks come (an HTTP timeout only bounds each wait for the next bytes). The
connection is then shut down, which tells the server to stop generating (llama.cpp and vLLM stop a slot
whose client has gone), and wakes the worker. Each call gets its own connection (no keep-alive), so the
socket to cut is always known: httpcore's ``trace`` extension reports it when it is opened.
"""

from __future__ import annotations

import queue
import socket
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import openai

from core.engine.llm.parsing import scrub

POLL_SECONDS = 0.1
_CONNECTED = (
    "connection.connect_tcp.complete",
    "connection.connect_unix_socket.complete",
    "connection.start_tls.complete",
)
_local = threading.local()
clock = time.monotonic  # what the time limit is measured by (a test moves its own)


class StreamCancelled(Exception):
    """The caller's cancel event was set; ``text`` is what had arrived."""

    def __init__(self, text: str):
        super().__init__("cancelled")
        self.text = text


class StreamTimedOut(Exception):
    """The call ran past its time limit; ``text`` is what had arrived."""

    def __init__(self, text: str):
        super().__init__("timed out")
        self.text = text


class CallStats:
    """What one call cost so far, filled in while it runs (also when it fails): HTTP attempts, content chunks,
    the text received, and the network stream to cut."""

    def __init__(self) -> None:
        self.attempts = 0
        self.chunks = 0
        self.text = ""
        self._stream: Any = None
        self._cut = False
        self._lock = threading.Lock()

    def trace(self, name: str, info: dict[str, Any]) -> None:
        """httpcore's trace extension; runs in the worker thread as the connection opens."""
        if name in _CONNECTED:
            with self._lock:
                self._stream = info.get("return_value")
                if self._cut:
                    _shutdown(self._stream)

    def cut(self) -> None:
        with self._lock:
            self._cut = True
            _shutdown(self._stream)

    @property
    def was_cut(self) -> bool:
        return self._cut


def _shutdown(stream: Any) -> None:
    sock = stream.get_extra_info("socket") if stream is not None else None
    if sock is None:
        return
    try:
        # The base class's shutdown, so that an SSL socket's state is left to the thread reading it.
        socket.socket.shutdown(sock, socket.SHUT_RDWR)
    except OSError:
        pass  # already closed


def on_request(request: Any) -> None:
    """httpx request hook: counts every attempt (the client's retries included) and asks for connection
    events. Hooks run in the thread that sends the request, the call's worker."""
    stats: CallStats | None = getattr(_local, "stats", None)
    if stats is not None:
        stats.attempts += 1
        request.extensions["trace"] = stats.trace


@dataclass
class Streamed:
    text: str
    finish_reason: str | None  # None: the stream ended without saying why (a dropped connection)
    prompt_tokens: int | None  # None: the endpoint did not report usage
    completion_tokens: int | None
    reasoning: str = ""  # a reasoning model's shown reasoning (``reasoning_content``, or vLLM's ``reasoning``)
    refusal: str = ""  # OpenAI's safety refusal, sent instead of content


def stream_chat(
    client: openai.OpenAI,
    request: dict[str, Any],
    stats: CallStats,
    on_text: Callable[[str], None] | None = None,
    cancel: threading.Event | None = None,
    usage: bool = True,
    limit: float | None = None,
) -> Streamed:
    """Raises what the openai client raises, ``StreamCancelled``, ``StreamTimedOut`` once ``limit`` seconds have
    passed since the call began (reading the prompt, retries and writing all counted), or ``ValueError``/
    ``TypeError``/``AttributeError`` for chunks that are not chat completion chunks. ``usage``: ask for the usage
    chunk (servers that refuse ``stream_options`` are asked without it)."""
    updates: queue.SimpleQueue = queue.SimpleQueue()
    deadline = None if limit is None else clock() + limit

    def work() -> None:
        _local.stats = stats
        try:
            options = {"stream_options": {"include_usage": True}} if usage else {}
            with client.chat.completions.create(**request, stream=True, **options) as chunks:
                for chunk in chunks:
                    if stats.was_cut:
                        break
                    updates.put((True, chunk))
            updates.put((True, None))
        except BaseException as exc:  # handed to the caller, which decides what it means
            updates.put((False, exc))
        finally:
            _local.stats = None

    threading.Thread(target=work, name="llm-stream", daemon=True).start()
    finish_reason, prompt_tokens, completion_tokens, received = None, None, None, 0
    reasoning, refusal = [], []
    try:
        while True:
            if cancel is not None and cancel.is_set():
                raise StreamCancelled(stats.text)
            if deadline is not None and clock() > deadline:
                raise StreamTimedOut(stats.text)
            try:
                ok, item = updates.get(timeout=POLL_SECONDS)
            except queue.Empty:
                continue
            if not ok:
                raise item
            if item is None:
                break
            received += 1
            delta, reason, counts, shown = _read_chunk(item)
            finish_reason = reason or finish_reason
            if counts is not None:
                prompt_tokens, completion_tokens = counts
            reasoning.append(shown.get("reasoning", ""))
            refusal.append(shown.get("refusal", ""))
            if delta:
                stats.text += delta
                stats.chunks += 1
                if on_text is not None:
                    on_text(stats.text)
    except BaseException:
        stats.cut()
        raise
    if not received:
        raise ValueError("the stream held no chat completion chunk")
    return Streamed(stats.text, finish_reason, prompt_tokens, completion_tokens, "".join(reasoning), "".join(refusal))


def _side_text(delta: Any, *names: str) -> str:
    """Text a server sends beside the content under one of ``names`` (fields the openai types do not declare)."""
    for name in names:
        value = getattr(delta, name, None)
        if isinstance(value, str) and value:
            return scrub(value)
    return ""


def _read_chunk(chunk: Any) -> tuple[str, str | None, tuple[int, int] | None, dict[str, str]]:
    delta, reason, shown = "", None, {"reasoning": "", "refusal": ""}
    for choice in chunk.choices or []:
        content = choice.delta.content if choice.delta is not None else None
        if content is not None and not isinstance(content, str):
            raise TypeError(f"a chunk's content is {type(content).__name__}, not text")
        delta += scrub(content or "")
        if choice.delta is not None:
            shown["reasoning"] += _side_text(choice.delta, "reasoning_content", "reasoning")
            shown["refusal"] += _side_text(choice.delta, "refusal")
        reason = choice.finish_reason or reason
    usage = getattr(chunk, "usage", None)
    counts = None
    if usage is not None:
        prompt, completion = getattr(usage, "prompt_tokens", None), getattr(usage, "completion_tokens", None)
        if isinstance(prompt, int) and isinstance(completion, int) and prompt >= 0 and completion >= 0:
            counts = (prompt, completion)
    return delta, reason if isinstance(reason, str) else None, counts, shown
