"""One chat client for every OpenAI-compatible backend, the embedded server included.

Every call streams (so it can be watched as it is written and stopped between chunks), and a reply is only
kept in the response cache once it has been accepted: complete, and parsed when a schema was asked.
"""

from __future__ import annotations

import copy
import threading
import time
from collections.abc import Callable
from contextlib import nullcontext
from typing import Any, TypeVar

import httpx2
import openai
from pydantic import BaseModel, PrivateAttr

from core.engine import paths
from core.engine.llm.answer_formats import AnswerFormat
from core.engine.llm.cache import ResponseCache, cache_key
from core.engine.llm.endpoint import CACHE_MODES, CacheMode, ConfigError, Endpoint, redact
from core.engine.llm.fan_out import FanOut
from core.engine.llm.fan_out import take as group_of_this_call
from core.engine.llm.ladder import (
    MEMORY,
    MODE_NAMES,
    TEXT_MODE,
    Memory,
    refused_field,
    refused_format,
    refused_limit,
    rungs_from,
)
from core.engine.llm.parsing import ReplyParseError, parse_reply
from core.engine.llm.profiles import Dialect, Lengths, Profile
from core.engine.llm.request import Asked, Wire, build, schema_format
from core.engine.llm.schemas import shortfalls
from core.engine.llm.servers import Server, server_for
from core.engine.llm.speed import WRITING
from core.engine.llm.stream import CallStats, StreamCancelled, StreamTimedOut, on_request, stream_chat
from core.engine.llm.tokens import tokens_of
from core.engine.settings import settings
from core.engine.trace import Shortfall, Usage

T = TypeVar("T", bound=BaseModel)
TextSink = Callable[[str], None]

__all__ = [
    "LLM",
    "CacheMode",
    "Endpoint",
    "LLMCancelled",
    "LLMError",
    "LLMParseError",
    "LLMResponse",
    "Refused",
    "schema_format",
]


class LLMError(RuntimeError):
    """A call that failed after its retries; the message says where and why. ``raw``: what the reply held so
    far; ``usage``: what the attempts cost (calls, seconds, tokens), so a trace can still count them."""

    def __init__(self, message: str, raw: str = "", usage: Usage | None = None):
        super().__init__(message)
        self.raw = raw
        self.usage = usage or Usage()


class LLMParseError(LLMError):
    """A reply that did not parse as the asked schema, even after one repair."""


class LLMCancelled(LLMError):
    """The caller's cancel event was set while the call ran."""


class Refused(LLMError):
    """The server refused the request (HTTP 400 or 422) and said why; ``param`` is the field it named, if any."""

    def __init__(
        self,
        message: str,
        raw: str = "",
        usage: Usage | None = None,
        *,
        status: int,
        reason: str,
        param: str | None = None,
    ):
        super().__init__(message, raw, usage)
        self.status, self.reason, self.param = status, reason, param


class LLMResponse(BaseModel):
    model_config = {"arbitrary_types_allowed": True}

    text: str
    parsed: Any = None  # an instance of the asked schema
    usage: Usage
    model: str
    finish_reason: str | None = None  # "stop", or "length" when the token budget cut the reply off
    mode: str | None = None  # the structured-output mode that answered (``ladder.MODE_NAMES``), or "text"
    notes: list[str] = []  # what could not be sent as asked, and why (the trace shows them)
    reasoning: str = ""  # what a reasoning model showed of its reasoning (DeepSeek-R1, vLLM's reasoning parsers)
    unseeded: bool = False  # a sampled reply whose seed the backend could not take
    rung: str | None = None  # the ladder's rung it came on (so a repair goes the same way)
    shortfalls: list[Shortfall] = []  # lists the parsed reply holds fewer items of than asked
    _cache_key: str | None = PrivateAttr(default=None)


# Request fields a call can do without, when a server refuses one by name (an unknown server's own rules).
_OPTIONAL_FIELDS = frozenset({"temperature", "top_p", "presence_penalty", "seed", "reasoning_effort", "stream_options"})
_TOKEN_FIELDS = {"max_tokens": "max_completion_tokens", "max_completion_tokens": "max_tokens"}


class LLM:
    def __init__(
        self,
        endpoint: Endpoint | None = None,
        cache: ResponseCache | None = None,
        cache_mode: CacheMode | None = None,
        memory: Memory = MEMORY,
    ):
        self.endpoint = endpoint or Endpoint.from_settings()
        self.cache_mode = cache_mode or settings().cache
        if self.cache_mode not in CACHE_MODES:
            raise ConfigError(f"the cache mode must be one of {', '.join(CACHE_MODES)}, not {self.cache_mode!r}")
        self.memory = memory
        self.reads_cache = True  # False: every call reaches the model (its reply still goes into the cache)
        self._cache = cache
        self._client: openai.OpenAI | None = None
        self._connect_lock = threading.Lock()

    def fresh(self) -> LLM:
        """The same model, asked afresh: no reply comes from the cache, and each new one replaces the cached one."""
        other = copy.copy(self)
        other.reads_cache = False
        return other

    # -- connection ------------------------------------------------------------------
    def _connect(self) -> openai.OpenAI:
        if problem := self.endpoint.problem:
            raise ConfigError(problem)
        with self._connect_lock:
            if self._client is None:
                base_url, credentials = self.server.address()
                # Credentials leave the URL (httpx would log it whole) and go as basic auth, as they did inside it.
                http = openai.DefaultHttpxClient(
                    limits=httpx2.Limits(max_connections=1000, max_keepalive_connections=0),
                    event_hooks={"request": [on_request]},
                    auth=httpx2.BasicAuth(*credentials) if credentials else None,
                )
                self._client = openai.OpenAI(
                    base_url=base_url,
                    api_key=self.endpoint.api_key or "not-needed",
                    timeout=self.endpoint.timeout,
                    max_retries=self.endpoint.max_retries,
                    http_client=http,
                )
            return self._client

    # -- what answers (the server and profile say; the client never asks which backend it is) -----------------
    @property
    def server(self) -> Server:
        return server_for(self.endpoint)

    @property
    def profile(self) -> Profile:
        """What the backend accepts (``core.engine.llm.profiles``), for this model."""
        return self.endpoint.profile

    @property
    def model_name(self) -> str:
        return self.server.model_name

    @property
    def backend(self) -> str:
        """What answers: the model name, and for an endpoint its URL too (credentials masked). The same model
        file served by another build gives other greedy replies, so cached replies and eval results are kept
        apart by this."""
        return self.server.backend

    @property
    def context_window(self) -> int | None:
        """Tokens one call can hold, prompt and reply; None when not known."""
        return self.server.context_window

    @property
    def reading_tokens(self) -> int | None:
        """Most tokens of documents one call reads on this backend, whatever its window would hold (the embedded
        server's ``read_tokens``); None where the window alone decides."""
        return self.server.reading_tokens

    @property
    def answer_format(self) -> AnswerFormat:
        """The final reader's format a method uses when its knob is automatic."""
        return self.profile.answer_format

    @property
    def lengths(self) -> Lengths:
        """The reply lengths that suit this backend: the papers', or the compact ones a small model needs."""
        return self.profile.lengths

    def fan_out(self, size: int) -> FanOut | None:
        """A group for ``size`` calls made at once whose shared prompt prefix the backend reads once for all."""
        return self.server.fan_out(size)

    @property
    def where(self) -> str:
        return self.server.where

    @property
    def cache(self) -> ResponseCache | None:
        if self._cache is None and self.cache_mode != "off":
            self._cache = ResponseCache(paths.llm_cache_path())
        return self._cache

    def models(self) -> list[str]:
        """The model names the server lists (``GET /models``), where it offers the list."""
        try:
            listed = self._connect().with_options(timeout=min(self.endpoint.timeout, 15), max_retries=0).models.list()
            return sorted(m.id for m in listed)
        except ConfigError:
            raise
        except (openai.OpenAIError, AttributeError, TypeError, ValueError) as exc:
            raise LLMError(
                redact(f"{self.where} did not list its models: {_short(str(exc))}", *self.endpoint.secrets)
            ) from exc

    # -- calls -----------------------------------------------------------------------
    def complete(
        self,
        messages: list[dict[str, str]],
        *,
        schema: type[T] | None = None,
        temperature: float = 0.0,
        max_tokens: int = 512,
        seed: int | None = None,
        top_p: float | None = None,
        presence_penalty: float | None = None,
        on_text: TextSink | None = None,
        cancel: threading.Event | None = None,
    ) -> LLMResponse:
        """Text, the parsed schema object when one is asked, and usage. One repair retry for bad JSON, and for a
        list shorter than its count (``LLMResponse.shortfalls`` says what is still missing after it).

        The backend's profile decides how the call is sent (``core.engine.llm.request``); a reply format it refuses steps
        down the ladder (``core.engine.llm.ladder``). ``on_text`` gets the whole reply so far as it grows (a cached reply:
        once, whole); a set ``cancel`` ends the call within about a second with ``LLMCancelled``."""
        asked = Asked(temperature, max_tokens, seed, top_p, presence_penalty)
        response = self._answer(messages, schema, asked, on_text, cancel)
        if schema is not None and response.usage.cached and not _parses(response.text, schema):
            self.cache.delete(response._cache_key)  # an unusable reply kept by a version that cached before parsing
            response = self._answer(messages, schema, asked, on_text, cancel, cached=False)
        if schema is None:
            self._keep(response)
            return response
        try:
            response.parsed = parse_reply(response.text, schema)
        except ReplyParseError as first:
            return self._repaired(messages, schema, asked, on_text, cancel, response, str(first))
        response.shortfalls = shortfalls(response.parsed)
        self._keep(response)
        if not response.shortfalls:
            return response
        # A list shorter than asked is usable: the model is asked once to complete it, and the fuller of the two
        # replies goes on (the trace says what is still missing).
        said = "; ".join(s.text for s in response.shortfalls)
        return self._repaired(
            messages, schema, asked, on_text, cancel, response, f"a list is shorter than asked ({said})"
        )

    def _repaired(
        self, messages, schema: type[T], asked: Asked, on_text, cancel, response: LLMResponse, problem: str
    ) -> LLMResponse:
        """The reply after one repair that shows the model what was wrong; the first reply when it was usable (a
        list short of its count) and the repair is no fuller."""
        # The repair goes the way the reply came (the same rung), so it carries the schema as that rung does:
        # in the response format, or written in the prompt.
        repair = messages + [
            {"role": "assistant", "content": response.text},
            {
                "role": "user",
                "content": f"That reply could not be used: {problem}. "
                "Reply again with only one JSON object that follows the schema.",
            },
        ]
        usable = response.parsed is not None
        try:
            retry = self._answer(repair, schema, asked, on_text, cancel, rungs=(response.rung,))
        except LLMError as exc:
            if usable and not isinstance(exc, LLMCancelled):  # the short list stands; the failed call is counted
                note = f"the repair call failed, so the list stays as written: {_short(str(exc), 160)}"
                return response.model_copy(
                    update={"usage": response.usage + exc.usage, "notes": [*response.notes, note]}
                )
            exc.usage = response.usage + exc.usage  # the reply that needed the repair is what the trace keeps
            exc.raw = exc.raw or response.text
            raise
        usage = response.usage + retry.usage
        notes = _merge(response.notes, retry.notes)
        try:
            parsed = parse_reply(retry.text, schema)
        except ReplyParseError as second:
            if usable:
                return response.model_copy(update={"usage": usage, "notes": notes})
            raise LLMParseError(
                f"the model's reply could not be parsed as {schema.__name__} after one repair: {second}",
                retry.text,
                usage,
            ) from second
        self._keep(retry)
        short = shortfalls(parsed)
        if usable and _missing(short) >= _missing(response.shortfalls):
            return response.model_copy(update={"usage": usage, "notes": notes})
        return retry.model_copy(update={"parsed": parsed, "usage": usage, "notes": notes, "shortfalls": short})

    def _answer(
        self,
        messages,
        schema,
        asked: Asked,
        on_text,
        cancel,
        cached: bool = True,
        rungs: tuple[Dialect | None, ...] | None = None,
    ) -> LLMResponse:
        """The reply from the first rung the server takes, starting where it last answered; the rungs it refused
        are remembered and said in the reply's notes, and what they cost counts."""
        if rungs is None:
            rungs = (None,) if schema is None else rungs_from(self.profile.dialect, self.memory.get(self.backend).rung)
        refused: list[str] = []
        spent = Usage()
        for rung in rungs:
            try:
                response = self._on_rung(messages, schema, rung, asked, on_text, cancel, cached)
            except Refused as exc:
                if rung is None or not refused_format(exc.status, exc.reason):
                    exc.usage = spent + exc.usage
                    raise
                spent += exc.usage
                refused.append(f"{MODE_NAMES[rung]} ({_short(exc.reason, 160)})")
                continue
            if rung is not None:
                self.memory.update(self.backend, rung=rung)
            if refused:
                response.notes.insert(
                    0, f"{self.where} refused {'; then '.join(refused)}; answered with {MODE_NAMES[rung]}"
                )
            response.usage = _with(spent, response.usage)
            return response
        raise LLMError(f"{self.where} refused every reply format it was offered: {'; '.join(refused)}", usage=spent)

    def _on_rung(
        self, messages, schema, rung: Dialect | None, asked: Asked, on_text, cancel, cached: bool
    ) -> LLMResponse:
        """One call on one rung. A field the server refuses by name is left out and the call made again (and the
        endpoint remembers it); a reasoning model whose reasoning used the whole budget is asked again with more."""
        room, notes, spent = None, [], Usage()
        for _ in range(len(_OPTIONAL_FIELDS) + 3):
            wire = build(
                self.profile,
                self.model_name,
                asked,
                messages,
                schema,
                rung,
                self.memory.get(self.backend),
                self.endpoint.reasoning_effort,
                room,
            )
            try:
                response = self._call(wire, schema, on_text, cancel, cached)
            except Refused as exc:
                spent += exc.usage
                if (most := refused_limit(exc.status, exc.reason)) is not None and most < next(
                    v for f, v in wire.params.items() if f in _TOKEN_FIELDS
                ):
                    self.memory.update(self.backend, token_limit=most)
                    notes.append(f"{self.where} takes at most {most:,} output tokens: asked again within that")
                    continue
                if self._learn(exc, wire):
                    notes.append(f"{self.where} refused {exc.param or 'a field'}: sent without it")
                    continue
                exc.usage = spent
                raise
            token_field = next(f for f in _TOKEN_FIELDS if f in wire.params)
            if (
                self.profile.reasoning
                and room is None
                and not response.text.strip()
                and response.finish_reason == "length"
            ):
                room = 2 * (wire.params[token_field] - asked.max_tokens)
                notes.append(
                    f"the hidden reasoning used all {wire.params[token_field]:,} tokens before any reply: "
                    f"asked again with room for {room:,}"
                )
                spent += response.usage
                continue
            response.mode, response.rung = MODE_NAMES[rung] if rung else TEXT_MODE, rung
            response.notes, response.unseeded = wire.notes + notes, wire.unseeded
            response.usage = _with(spent, response.usage)
            return response
        raise LLMError(f"{self.where} kept refusing the request's fields", usage=spent)

    def _learn(self, refusal: Refused, wire: Wire) -> bool:
        """Remembers a field the server refused by name; False when the refusal names none it can do without."""
        sent = frozenset(wire.params) | frozenset({"stream_options"})
        name = refused_field(
            refusal.status, refusal.reason, refusal.param, (_OPTIONAL_FIELDS | frozenset(_TOKEN_FIELDS)) & sent
        )
        if name is None:
            return False
        refusal.param = name
        if name in _TOKEN_FIELDS:
            self.memory.update(self.backend, token_field=_TOKEN_FIELDS[name])
        else:
            self.memory.update(self.backend, dropped=name)
        return True

    def _use_cache(self, temperature: float, seed: int | None) -> bool:
        """In "auto" mode: greedy calls, and sampled calls that name a seed, so a saved run that sampled replays
        (and a what-if re-run of it starts) with the same replies; an unseeded sampled call draws afresh."""
        return self.cache_mode == "always" or (self.cache_mode == "auto" and (temperature == 0 or seed is not None))

    def _keep(self, response: LLMResponse) -> None:
        """Caches an accepted reply, one the token budget cut off included (the same request is cut at the same
        place, and a method that writes to a length, as MedRGAG's generator, must replay); an empty one, never."""
        if response._cache_key and not response.usage.cached and response.text.strip():
            self.cache.put(
                response._cache_key,
                response.model,
                response.text,
                response.usage.prompt_tokens,
                response.usage.completion_tokens,
                response.finish_reason or "stop",
            )

    def _call(self, wire: Wire, schema, on_text, cancel, cached: bool = True) -> LLMResponse:
        if cancel is not None and cancel.is_set():
            raise LLMCancelled("the call was cancelled before it started")
        # Everything that shapes the reply is in the key: what was sent, and what was asked but could not be.
        started = time.perf_counter()
        temperature = wire.key_params.get("temperature", 0.0)
        key = (
            cache_key(self.backend, wire.messages, wire.key_params)
            if self._use_cache(temperature, wire.key_params.get("seed")) and self.cache is not None
            else None
        )
        group = group_of_this_call()
        if key and cached and self.reads_cache and (hit := self.cache.get(key)):
            if group is not None:
                group.skip()
            if on_text is not None:
                on_text(hit["text"])
            usage = Usage(
                calls=1,
                prompt_tokens=hit["prompt_tokens"],
                completion_tokens=hit["completion_tokens"],
                seconds=round(time.perf_counter() - started, 3),
                cached=True,
            )
            response = LLMResponse(
                text=hit["text"], model=self.model_name, finish_reason=hit["finish_reason"], usage=usage
            )
        else:
            written = _Written(self.backend, on_text)
            with group.call(wire.messages, cancel) if group is not None else nullcontext():
                response = self._request(wire.messages, schema, wire.params, written, cancel)
            written.done()
        response._cache_key = key
        return response

    def _request(self, messages, schema, params, on_text, cancel) -> LLMResponse:
        """The endpoint call itself, streamed; every failure is an ``LLMError`` with what it cost (a ``Refused`` when
        the server refused the request and said why). ``schema`` is what the reply will be parsed as (scripted test
        models answer by it)."""
        client = self._connect()
        stats, started = CallStats(), time.perf_counter()

        def cost(prompt: int | None = None, completion: int | None = None) -> Usage:
            """Usage as the endpoint reported it; otherwise the prompt estimated (once the model is writing, it
            has read it) and one token a content chunk, as servers stream them."""
            if prompt is None:
                prompt = _estimate_prompt(messages) if stats.chunks else 0
            return Usage(
                calls=max(stats.attempts, 1),
                seconds=round(time.perf_counter() - started, 3),
                prompt_tokens=prompt,
                completion_tokens=stats.chunks if completion is None else completion,
            )

        def fail(message: str, kind: type[LLMError] = LLMError) -> LLMError:
            return kind(redact(message, *self.endpoint.secrets), stats.text, cost())

        tries = f"after {self.endpoint.max_retries + 1} tries"
        usage_chunk = self.profile.streams_usage and "stream_options" not in self.memory.get(self.backend).dropped
        try:
            reply = stream_chat(
                client,
                {"model": self.model_name, "messages": messages, **params},
                stats,
                on_text,
                cancel,
                usage=usage_chunk,
                limit=self.endpoint.timeout,
            )
        except StreamCancelled:
            raise fail("the call was cancelled", LLMCancelled) from None
        except StreamTimedOut:
            raise fail(
                f"{self.where} did not finish the reply within the {self.endpoint.timeout:.0f} s a call may take "
                f"({len(stats.text):,} characters had arrived)"
            ) from None
        except (openai.APITimeoutError, httpx2.TimeoutException) as exc:
            raise fail(f"{self.where} did not answer within {self.endpoint.timeout:.0f}s ({tries})") from exc
        except openai.APIConnectionError as exc:
            raise fail(f"could not reach {self.where} ({tries}): {exc.__cause__ or exc}") from exc
        except openai.APIStatusError as exc:
            message = f"{self.where} answered HTTP {exc.status_code}: {_short(exc.message)}"
            if exc.status_code in (400, 422):
                # The body whole: servers say which field they refuse in it, some in a JSON list (Gemini's layer).
                reason = redact(f"{exc.message} {' '.join(_strings(exc.body))}", *self.endpoint.secrets)
                raise Refused(
                    redact(message, *self.endpoint.secrets),
                    stats.text,
                    cost(),
                    status=exc.status_code,
                    reason=reason,
                    param=getattr(exc, "param", None),
                ) from exc
            raise fail(message) from exc
        except (openai.OpenAIError, AttributeError, IndexError, KeyError, TypeError, ValueError) as exc:
            raise fail(f"{self.where} sent a reply that is not a chat completion: {_short(str(exc))}") from exc
        if reply.finish_reason is None:
            raise fail(
                f"the connection to {self.where} closed before the reply was finished "
                f"({len(reply.text):,} characters had arrived)"
            )
        if not reply.text and reply.refusal:
            raise fail(f"{self.model_name} declined to answer: {_short(reply.refusal)}")
        return LLMResponse(
            text=reply.text,
            model=self.model_name,
            finish_reason=reply.finish_reason,
            reasoning=reply.reasoning,
            usage=cost(reply.prompt_tokens, reply.completion_tokens),
        )


class _Written:
    """A call's text sink that also tells the writing meter (``speed.WRITING``) each token as it comes, and the
    call's own rate once it ends: from its first token to its last, so reading the prompt is not counted."""

    def __init__(self, backend: str, on_text: TextSink | None):
        self.backend, self.on_text = backend, on_text
        self.tokens, self.first, self.last = 0, 0.0, 0.0

    def __call__(self, text: str) -> None:
        WRITING.tick(self.backend)
        self.last = time.monotonic()
        self.first = self.first or self.last
        self.tokens += 1
        if self.on_text is not None:
            self.on_text(text)

    def done(self) -> None:
        WRITING.call(self.backend, self.tokens - 1, self.last - self.first)


def _strings(body: Any) -> list[str]:
    """Every text in an error body, whatever its shape (an object, a list of objects, plain text)."""
    if isinstance(body, str):
        return [body]
    if isinstance(body, dict):
        return [t for v in body.values() for t in _strings(v)]
    if isinstance(body, list):
        return [t for v in body for t in _strings(v)]
    return []


def _with(spent: Usage, usage: Usage) -> Usage:
    """A call's usage with what its refused or emptied attempts cost before it (a reply from the cache stays one)."""
    return usage if spent == Usage() else spent + usage


def _merge(first: list[str], second: list[str]) -> list[str]:
    return list(dict.fromkeys(first + second))


def _missing(found: list[Shortfall]) -> int:
    return sum(s.asked - s.wrote for s in found)


def _parses(text: str, schema: type[BaseModel]) -> bool:
    try:
        parse_reply(text, schema)
    except ReplyParseError:
        return False
    return True


def _estimate_prompt(messages: list[dict[str, str]]) -> int:
    """For endpoints that do not report usage: the studio's one characters-per-token rule."""
    return tokens_of("".join(str(m.get("content", "")) for m in messages))


def _short(text: str, limit: int = 300) -> str:
    return text if len(text) <= limit else text[:limit] + "…"
