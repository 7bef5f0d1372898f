"""Where LLM calls go, read from the environment with every value checked, and credentials kept out of sight.

A base URL may carry credentials (``http://user:key@host/v1``); they are used for the connection and never
appear in a message, an event, a stored row, a log line or a cache key: everything shows ``display_url``.
"""

from __future__ import annotations

import math
import os
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Literal
from urllib.parse import unquote, urlsplit, urlunsplit

from core.credentials import mask_userinfo

CacheMode = Literal["auto", "always", "off"]  # auto: deterministic (temperature 0) and seeded calls
CACHE_MODES: tuple[str, ...] = ("auto", "always", "off")
DEFAULT_TIMEOUT = 300.0
DEFAULT_RETRIES = 2


class ConfigError(ValueError):
    """A setting that cannot be used; the message names the setting and what it accepts."""


def split_credentials(url: str) -> tuple[str, tuple[str, str] | None]:
    """The URL without its user-info part, and the (user, password) it held, if any."""
    parts = urlsplit(url)
    if "@" not in parts.netloc:
        return url, None
    userinfo, _, host = parts.netloc.rpartition("@")
    user, _, password = userinfo.partition(":")
    return urlunsplit(parts._replace(netloc=host)), (unquote(user), unquote(password))


def mask_url(url: str) -> str:
    """The URL as it may be shown: credentials replaced by ``***``."""
    bare, credentials = split_credentials(url)
    if credentials is None:
        return url
    parts = urlsplit(bare)
    return urlunsplit(parts._replace(netloc=f"***@{parts.netloc}"))


def redact(text: str, *secrets: str) -> str:
    """Text with any URL credentials and the given secrets (as typed, and URL-decoded) masked."""
    text = mask_userinfo(text)  # a linear scan: a pattern for this was quadratic on long runs of letters
    for secret in secrets:
        for form in {secret, unquote(secret)}:
            if len(form) >= 3:  # shorter strings would mask ordinary words
                text = text.replace(form, "***")
    return text


def _number(env: Mapping[str, str], name: str, default: float, *, integer: bool, minimum: float,
            exclusive: bool = False) -> float:
    raw = env.get(name, "").strip()
    if not raw:
        return default
    kind = "a whole number" if integer else "a number"
    bound = f"above {minimum:g}" if exclusive else f"{minimum:g} or more"
    try:
        value = int(raw) if integer else float(raw)
    except ValueError:
        raise ConfigError(f"{name} must be {kind} {bound}, not {raw!r}") from None
    if not math.isfinite(value) or value < minimum or (exclusive and value == minimum):
        raise ConfigError(f"{name} must be {kind} {bound}, not {raw!r}")
    return value


def cache_mode_from_env(env: Mapping[str, str] = os.environ) -> CacheMode:
    mode = env.get("MEDRAG_CACHE", "").strip() or "auto"
    if mode not in CACHE_MODES:
        raise ConfigError(f"MEDRAG_CACHE must be one of {', '.join(CACHE_MODES)}, not {mode!r}")
    return mode  # type: ignore[return-value]


@dataclass(frozen=True)
class Endpoint:
    """Where to send calls. ``base_url=None`` means the embedded model."""

    base_url: str | None = None
    model: str = ""
    api_key: str = ""
    timeout: float = DEFAULT_TIMEOUT
    max_retries: int = DEFAULT_RETRIES
    context_window: int | None = None  # tokens one call can hold (prompt and reply), when known

    @property
    def embedded(self) -> bool:
        return not self.base_url

    @property
    def display_url(self) -> str:
        return mask_url(self.base_url) if self.base_url else ""

    @property
    def secrets(self) -> tuple[str, ...]:
        """Strings that must never be shown: the API key and any password or user name in the URL."""
        _, credentials = split_credentials(self.base_url or "")
        return tuple(s for s in (self.api_key, *(credentials or ())) if s)

    @classmethod
    def from_env(cls, env: Mapping[str, str] = os.environ) -> Endpoint:
        """Raises ``ConfigError`` naming the variable when a value does not parse."""
        base_url = env.get("MEDRAG_BASE_URL", "").strip() or None
        if base_url and urlsplit(base_url).scheme not in ("http", "https"):
            raise ConfigError(f"MEDRAG_BASE_URL must start with http:// or https://, not {mask_url(base_url)!r}")
        return cls(
            base_url=base_url,
            model=env.get("MEDRAG_MODEL", "").strip(),
            api_key=env.get("MEDRAG_API_KEY") or env.get("OPENAI_API_KEY", ""),
            timeout=_number(env, "MEDRAG_TIMEOUT", DEFAULT_TIMEOUT, integer=False, minimum=0, exclusive=True),
            max_retries=int(_number(env, "MEDRAG_MAX_RETRIES", DEFAULT_RETRIES, integer=True, minimum=0)),
            context_window=int(_number(env, "MEDRAG_CONTEXT_WINDOW", 0, integer=True, minimum=0)) or None,
        )


def check_environment(env: Mapping[str, str] = os.environ) -> None:
    """Every LLM setting from the environment, checked at once (commands and the app call it at start)."""
    Endpoint.from_env(env)
    cache_mode_from_env(env)
