"""One chat client for every OpenAI-compatible backend, the embedded server included.

Every call streams (so it can be watched as it is written and stopped between chunks), and a reply is only
kept in the response cache once it has been accepted: complete, and parsed when a schema was asked.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from contextlib import nullcontext
from typing import Any, TypeVar

import httpx2
import openai
from pydantic import BaseModel, PrivateAttr

from core import paths
from core.llm.answer_formats import EMBEDDED_ANSWER_FORMAT, PAPERS_FORMAT, AnswerFormat
from core.llm.cache import ResponseCache, cache_key
from core.llm.endpoint import CACHE_MODES, CacheMode, ConfigError, Endpoint, cache_mode_from_env, redact, \
    split_credentials
from core.llm.fan_out import FanOut
from core.llm.fan_out import take as group_of_this_call
from core.llm.parsing import ReplyParseError, parse_reply
from core.llm.stream import CallStats, StreamCancelled, on_request, stream_chat
from core.trace import Usage

T = TypeVar("T", bound=BaseModel)
TextSink = Callable[[str], None]

__all__ = ["LLM", "CacheMode", "Endpoint", "LLMCancelled", "LLMError", "LLMParseError", "LLMResponse"]


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


class LLMResponse(BaseModel):
    model_config = {"arbitrary_types_allowed": True}

    text: str
    parsed: Any = None  # an instance of the asked schema
    usage: Usage
    model: str
    finish_reason: str | None = None  # "stop", or "length" when the token budget cut the reply off
    _cache_key: str | None = PrivateAttr(default=None)


def schema_format(schema: type[BaseModel]) -> dict[str, Any]:
    return {"type": "json_schema", "json_schema": {"name": schema.__name__, "schema": schema.model_json_schema(), "strict": True}}


class LLM:
    def __init__(self, endpoint: Endpoint | None = None, cache: ResponseCache | None = None,
                 cache_mode: CacheMode | None = None):
        self.endpoint = endpoint or Endpoint.from_env()
        self.cache_mode = cache_mode or cache_mode_from_env()
        if self.cache_mode not in CACHE_MODES:
            raise ConfigError(f"the cache mode must be one of {', '.join(CACHE_MODES)}, not {self.cache_mode!r}")
        self._cache = cache
        self._client: openai.OpenAI | None = None
        self._connect_lock = threading.Lock()
        self.model = self.endpoint.model

    # -- connection ------------------------------------------------------------------
    def _connect(self) -> openai.OpenAI:
        with self._connect_lock:
            if self._client is None:
                if self.endpoint.embedded:
                    from core.llm.embedded import MODEL_NAME, EmbeddedServer

                    base_url, credentials = EmbeddedServer.get().base_url, None
                    self.model = self.model or MODEL_NAME
                else:
                    base_url, credentials = split_credentials(self.endpoint.base_url)
                # Credentials leave the URL (httpx would log it whole) and go as basic auth, as they did inside it.
                http = openai.DefaultHttpxClient(
                    limits=httpx2.Limits(max_connections=1000, max_keepalive_connections=0),
                    event_hooks={"request": [on_request]}, auth=httpx2.BasicAuth(*credentials) if credentials else None)
                self._client = openai.OpenAI(base_url=base_url, api_key=self.endpoint.api_key or "not-needed",
                                             timeout=self.endpoint.timeout, max_retries=self.endpoint.max_retries,
                                             http_client=http)
            return self._client

    @property
    def model_name(self) -> str:
        if self.endpoint.embedded and not self.model:
            from core.llm.embedded import MODEL_NAME

            return MODEL_NAME
        return self.model

    @property
    def backend(self) -> str:
        """What answers: the model name, and for an endpoint its URL too (credentials masked). The same model
        file served by another build gives other greedy replies, so cached replies and eval results are kept
        apart by this."""
        return self.model_name if self.endpoint.embedded else f"{self.model_name} @ {self.endpoint.display_url}"

    @property
    def context_window(self) -> int | None:
        """Tokens one call can hold, prompt and reply: an endpoint's when it is set, the embedded server's slot as
        the server reports it (starting the server if need be); None when not known."""
        if self.endpoint.context_window:
            return self.endpoint.context_window
        if self.endpoint.embedded:
            from core.llm.embedded import EmbeddedServer

            return EmbeddedServer.get().slot_context
        return None

    @property
    def reading_tokens(self) -> int | None:
        """Most tokens of documents one call reads on this backend, whatever its window would hold: the embedded
        server's ``read_tokens`` (what a few CPU cores read in well under a minute); None for an endpoint, whose
        window alone decides."""
        if self.endpoint.embedded:
            from core.llm.embedded import SHIPPED

            return SHIPPED.read_tokens
        return None

    @property
    def answer_format(self) -> AnswerFormat:
        """The final reader's format a method uses when its knob is automatic: the one measured best on the
        embedded model, the papers' on an endpoint."""
        return EMBEDDED_ANSWER_FORMAT if self.endpoint.embedded else PAPERS_FORMAT

    def fan_out(self, size: int) -> FanOut | None:
        """A group for ``size`` calls made at once whose shared prompt prefix the backend reads once for all of them:
        the embedded server's, which copies it between its slots; None for an endpoint, which shares prefixes (or
        not) its own way. The server is started only if a call of the group goes to it."""
        if not self.endpoint.embedded:
            return None
        from core.llm.embedded import SHIPPED, EmbeddedServer

        if size < 2 or not SHIPPED.copies_prefixes:
            return None
        return FanOut(size, lambda prefix, copies: EmbeddedServer.get().share_prefix(prefix, copies))

    @property
    def where(self) -> str:
        return "the embedded model" if self.endpoint.embedded else f"the LLM endpoint at {self.endpoint.display_url}"

    @property
    def cache(self) -> ResponseCache | None:
        if self._cache is None and self.cache_mode != "off":
            self._cache = ResponseCache(paths.llm_cache_path())
        return self._cache

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
        """Text, the parsed schema object when one is asked, and usage. One repair retry for bad JSON.

        ``top_p`` and ``presence_penalty`` go to the backend only when given (OpenAI's names; llama.cpp's server
        reads the same keys), so calls that do not set them keep their cache keys. ``on_text`` gets the whole reply
        so far as it grows (a cached reply: once, whole); a set ``cancel`` ends the call within about a second
        with ``LLMCancelled``."""
        sampling = {name: value for name, value in (("top_p", top_p), ("presence_penalty", presence_penalty))
                    if value is not None}

        def call(msgs: list[dict[str, str]], cached: bool = True) -> LLMResponse:
            return self._call(msgs, schema, temperature, max_tokens, seed, on_text, cancel, cached, sampling)

        response = call(messages)
        if schema is not None and response.usage.cached and not _parses(response.text, schema):
            self.cache.delete(response._cache_key)  # an unusable reply kept by a version that cached before parsing
            response = call(messages, cached=False)
        if schema is None:
            self._keep(response)
            return response
        try:
            response.parsed = parse_reply(response.text, schema)
        except ReplyParseError as first:
            repair = messages + [
                {"role": "assistant", "content": response.text},
                {"role": "user", "content": f"That reply could not be used: {first}. "
                                            "Reply again with only one JSON object that follows the schema."},
            ]
            try:
                retry = call(repair)
            except LLMError as exc:  # the repair failed: the reply that needed it is what the trace keeps
                exc.usage = response.usage + exc.usage
                exc.raw = exc.raw or response.text
                raise
            usage = response.usage + retry.usage
            try:
                parsed = parse_reply(retry.text, schema)
            except ReplyParseError as second:
                raise LLMParseError(f"the model's reply could not be parsed as {schema.__name__} after one repair: {second}",
                                    retry.text, usage) from second
            self._keep(retry)
            return LLMResponse(text=retry.text, parsed=parsed, usage=usage, model=retry.model,
                               finish_reason=retry.finish_reason)
        self._keep(response)
        return response

    def _use_cache(self, temperature: float, seed: int | None) -> bool:
        """In "auto" mode: greedy calls, and sampled calls that name a seed, so a saved run that sampled replays
        (and a what-if re-run of it starts) with the same replies; an unseeded sampled call draws afresh."""
        return self.cache_mode == "always" or (self.cache_mode == "auto" and (temperature == 0 or seed is not None))

    def _keep(self, response: LLMResponse) -> None:
        """Caches an accepted reply, one the token budget cut off included (the same request is cut at the same
        place, and a method that writes to a length, as MedRGAG's generator, must replay); one that ended without
        saying why (a dropped stream), never."""
        if response._cache_key and not response.usage.cached and response.finish_reason in ("stop", "length"):
            self.cache.put(response._cache_key, response.model, response.text, response.usage.prompt_tokens,
                           response.usage.completion_tokens, response.finish_reason)

    def _call(self, messages, schema, temperature, max_tokens, seed, on_text, cancel, cached=True,
              sampling: dict[str, float] | None = None) -> LLMResponse:
        if cancel is not None and cancel.is_set():
            raise LLMCancelled("the call was cancelled before it started")
        # Everything that shapes the reply is in the params, so it is in the cache key too.
        params: dict[str, Any] = {"temperature": temperature, "max_tokens": max_tokens, **(sampling or {})}
        if seed is not None:
            params["seed"] = seed
        if schema is not None:
            params["response_format"] = schema_format(schema)
        started = time.perf_counter()
        key = cache_key(self.backend, messages, params) if self._use_cache(temperature, seed) and self.cache is not None else None
        group = group_of_this_call()
        if key and cached and (hit := self.cache.get(key)):
            if group is not None:
                group.skip()
            if on_text is not None:
                on_text(hit["text"])
            usage = Usage(calls=1, prompt_tokens=hit["prompt_tokens"], completion_tokens=hit["completion_tokens"],
                          seconds=round(time.perf_counter() - started, 3), cached=True)
            response = LLMResponse(text=hit["text"], model=self.model_name, finish_reason=hit["finish_reason"],
                                   usage=usage)
        else:
            with group.call(messages, cancel) if group is not None else nullcontext():
                response = self._request(messages, schema, params, on_text, cancel)
        response._cache_key = key
        return response

    def _request(self, messages, schema, params, on_text, cancel) -> LLMResponse:
        """The endpoint call itself, streamed; every failure is an ``LLMError`` with what it cost."""
        client = self._connect()
        stats, started = CallStats(), time.perf_counter()

        def cost(prompt: int | None = None, completion: int | None = None) -> Usage:
            """Usage as the endpoint reported it; otherwise the prompt estimated (once the model is writing, it
            has read it) and one token a content chunk, as servers stream them."""
            if prompt is None:
                prompt = _estimate_prompt(messages) if stats.chunks else 0
            return Usage(calls=max(stats.attempts, 1), seconds=round(time.perf_counter() - started, 3),
                         prompt_tokens=prompt, completion_tokens=stats.chunks if completion is None else completion)

        def fail(message: str, kind: type[LLMError] = LLMError) -> LLMError:
            return kind(redact(message, *self.endpoint.secrets), stats.text, cost())

        tries = f"after {self.endpoint.max_retries + 1} tries"
        try:
            reply = stream_chat(client, {"model": self.model_name, "messages": messages, **params}, stats,
                                on_text, cancel)
        except StreamCancelled:
            raise fail("the call was cancelled", LLMCancelled) from None
        except openai.APITimeoutError as exc:
            raise fail(f"{self.where} did not answer within {self.endpoint.timeout:.0f}s ({tries})") from exc
        except openai.APIConnectionError as exc:
            raise fail(f"could not reach {self.where} ({tries}): {exc.__cause__ or exc}") from exc
        except openai.APIStatusError as exc:
            raise fail(f"{self.where} answered HTTP {exc.status_code}: {_short(exc.message)}") from exc
        except (openai.OpenAIError, AttributeError, IndexError, KeyError, TypeError, ValueError) as exc:
            raise fail(f"{self.where} sent a reply that is not a chat completion: {_short(str(exc))}") from exc
        return LLMResponse(text=reply.text, model=self.model_name, finish_reason=reply.finish_reason,
                           usage=cost(reply.prompt_tokens, reply.completion_tokens))


def _parses(text: str, schema: type[BaseModel]) -> bool:
    try:
        parse_reply(text, schema)
    except ReplyParseError:
        return False
    return True


def _estimate_prompt(messages: list[dict[str, str]]) -> int:
    """About four characters a token, for endpoints that do not report usage."""
    return sum(len(str(m.get("content", ""))) for m in messages) // 4


def _short(text: str, limit: int = 300) -> str:
    return text if len(text) <= limit else text[:limit] + "…"
