"""One chat client for every OpenAI-compatible backend, the embedded server included."""

from __future__ import annotations

import os
import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal, TypeVar

import openai
from pydantic import BaseModel

from core import paths
from core.llm.cache import ResponseCache, cache_key
from core.llm.parsing import ReplyParseError, parse_reply
from core.trace import Usage

T = TypeVar("T", bound=BaseModel)
CacheMode = Literal["auto", "always", "off"]  # auto: only deterministic (temperature 0) calls


class LLMError(RuntimeError):
    """A call that failed after its retries; the message says where and why."""


class LLMParseError(LLMError):
    """``raw``: the last reply; ``usage``: what the failed attempts cost, so a trace can still count them."""

    def __init__(self, message: str, raw: str, usage: Usage | None = None):
        super().__init__(message)
        self.raw = raw
        self.usage = usage or Usage()


@dataclass(frozen=True)
class Endpoint:
    """Where to send calls. ``base_url=None`` means the embedded model."""

    base_url: str | None = None
    model: str = ""
    api_key: str = ""
    timeout: float = 300.0
    max_retries: int = 2

    @property
    def embedded(self) -> bool:
        return not self.base_url

    @classmethod
    def from_env(cls, env: Mapping[str, str] = os.environ) -> Endpoint:
        return cls(
            base_url=env.get("MEDRAG_BASE_URL") or None,
            model=env.get("MEDRAG_MODEL", ""),
            api_key=env.get("MEDRAG_API_KEY") or env.get("OPENAI_API_KEY", ""),
            timeout=float(env.get("MEDRAG_TIMEOUT", 300)),
            max_retries=int(env.get("MEDRAG_MAX_RETRIES", 2)),
        )


class LLMResponse(BaseModel):
    model_config = {"arbitrary_types_allowed": True}

    text: str
    parsed: Any = None  # an instance of the asked schema
    usage: Usage
    model: str


def schema_format(schema: type[BaseModel]) -> dict[str, Any]:
    return {"type": "json_schema", "json_schema": {"name": schema.__name__, "schema": schema.model_json_schema(), "strict": True}}


class LLM:
    def __init__(self, endpoint: Endpoint | None = None, cache: ResponseCache | None = None,
                 cache_mode: CacheMode | None = None):
        self.endpoint = endpoint or Endpoint.from_env()
        self.cache_mode = cache_mode or os.environ.get("MEDRAG_CACHE", "auto")
        if self.cache_mode not in ("auto", "always", "off"):
            raise ValueError(f"MEDRAG_CACHE must be auto, always or off, not {self.cache_mode!r}")
        self._cache = cache
        self._client: openai.OpenAI | None = None
        self._base_url = self.endpoint.base_url
        self.model = self.endpoint.model

    # -- connection ------------------------------------------------------------------
    def _connect(self) -> openai.OpenAI:
        if self._client is None:
            if self.endpoint.embedded:
                from core.llm.embedded import MODEL_NAME, EmbeddedServer

                self._base_url = EmbeddedServer.get().base_url
                self.model = self.model or MODEL_NAME
            self._client = openai.OpenAI(
                base_url=self._base_url, api_key=self.endpoint.api_key or "not-needed",
                timeout=self.endpoint.timeout, max_retries=self.endpoint.max_retries,
            )
        return self._client

    @property
    def model_name(self) -> str:
        if self.endpoint.embedded and not self.model:
            from core.llm.embedded import MODEL_NAME

            return MODEL_NAME
        return self.model

    @property
    def backend(self) -> str:
        """What answers: the model name, and for an endpoint its URL too. The same model file served by
        another build gives other greedy replies, so cached replies and eval results are kept apart by this."""
        return self.model_name if self.endpoint.embedded else f"{self.model_name} @ {self.endpoint.base_url}"

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
    ) -> LLMResponse:
        """Text, the parsed schema object when one is asked, and usage. One repair retry for bad JSON."""
        response = self._call(messages, schema, temperature, max_tokens, seed)
        if schema is None:
            return response
        try:
            response.parsed = parse_reply(response.text, schema)
            return response
        except ReplyParseError as first:
            repair = messages + [
                {"role": "assistant", "content": response.text},
                {"role": "user", "content": f"That reply could not be used: {first}. "
                                            "Reply again with only one JSON object that follows the schema."},
            ]
            retry = self._call(repair, schema, temperature, max_tokens, seed)
            usage = response.usage + retry.usage
            try:
                parsed = parse_reply(retry.text, schema)
            except ReplyParseError as second:
                raise LLMParseError(f"the model's reply could not be parsed as {schema.__name__} after one repair: {second}",
                                    retry.text, usage) from second
            return LLMResponse(text=retry.text, parsed=parsed, usage=usage, model=retry.model)

    def _use_cache(self, temperature: float) -> bool:
        return self.cache_mode == "always" or (self.cache_mode == "auto" and temperature == 0)

    def _call(self, messages, schema, temperature, max_tokens, seed) -> LLMResponse:
        client = self._connect()
        params: dict[str, Any] = {"temperature": temperature, "max_tokens": max_tokens}
        if seed is not None:
            params["seed"] = seed
        if schema is not None:
            params["response_format"] = schema_format(schema)
        started = time.perf_counter()
        key = cache_key(self.backend, messages, params)
        use_cache = self._use_cache(temperature) and self.cache is not None
        if use_cache and (hit := self.cache.get(key)):
            return LLMResponse(text=hit["text"], model=self.model_name, usage=Usage(
                calls=1, prompt_tokens=hit["prompt_tokens"], completion_tokens=hit["completion_tokens"],
                seconds=round(time.perf_counter() - started, 3), cached=True))
        try:
            completion = client.chat.completions.create(model=self.model_name, messages=messages, **params)
            text = completion.choices[0].message.content or ""
            usage = completion.usage
        except openai.APITimeoutError as exc:
            raise LLMError(f"the LLM endpoint at {self._base_url} did not answer within {self.endpoint.timeout:.0f}s "
                           f"(after {self.endpoint.max_retries + 1} tries)") from exc
        except openai.APIConnectionError as exc:
            raise LLMError(f"could not reach the LLM endpoint at {self._base_url} "
                           f"(after {self.endpoint.max_retries + 1} tries): {exc.__cause__ or exc}") from exc
        except openai.APIStatusError as exc:
            raise LLMError(f"the LLM endpoint at {self._base_url} answered HTTP {exc.status_code}: "
                           f"{_short(exc.message)}") from exc
        except (openai.OpenAIError, AttributeError, IndexError, TypeError, ValueError) as exc:
            raise LLMError(f"the LLM endpoint at {self._base_url} sent a reply that is not a chat completion: "
                           f"{_short(str(exc))}") from exc
        prompt_tokens = getattr(usage, "prompt_tokens", 0) or 0
        completion_tokens = getattr(usage, "completion_tokens", 0) or 0
        if use_cache:
            self.cache.put(key, self.model_name, text, prompt_tokens, completion_tokens)
        return LLMResponse(text=text, model=self.model_name, usage=Usage(
            calls=1, prompt_tokens=prompt_tokens, completion_tokens=completion_tokens,
            seconds=round(time.perf_counter() - started, 3), cached=False))


def _short(text: str, limit: int = 300) -> str:
    return text if len(text) <= limit else text[:limit] + "…"
