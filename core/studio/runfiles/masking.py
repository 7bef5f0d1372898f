"""Credentials never travel in a run file: user:password in a URL, key-like query parameters, bearer tokens and
the values of the keys configured here (every secret setting) are masked wherever they occur in any text of it."""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

from core.engine.llm.endpoint import redact
from core.engine.settings import Settings, settings

MASK = "***"
_KEY_PARAM = re.compile(
    r"(?P<name>[?&](?:api[_-]?key|key|token|access[_-]?token|secret|password|sig)=)[^&#\s\"'<>]+", re.IGNORECASE
)
_BEARER = re.compile(r"(?P<name>\bBearer\s+)[A-Za-z0-9._~+/=-]{8,}")
_MIN_SECRET = 6  # shorter values (e.g. "local") would mask ordinary words


def known_secrets(configured: Settings | None = None) -> list[str]:
    return [v for v in (configured or settings()).secrets() if len(v) >= _MIN_SECRET]


def mask(text: str, secrets: Iterable[str] = ()) -> str:
    """``text`` with every credential replaced by ``***``; the rest is unchanged."""
    text = redact(text, *sorted(set(secrets), key=len, reverse=True))  # URL user-info and the secrets themselves
    if "=" in text:  # a test in C first: neither pattern has a literal start the engine could jump to
        text = _KEY_PARAM.sub(lambda m: f"{m['name']}{MASK}", text)
    if "Bearer" in text:
        text = _BEARER.sub(lambda m: f"{m['name']}{MASK}", text)
    return text


def mask_data(value: Any, secrets: Iterable[str] = ()) -> Any:
    """Every string in decoded JSON masked, one at a time (so a pattern never runs across two values)."""
    secrets = list(secrets)
    if isinstance(value, str):
        return mask(value, secrets)
    if isinstance(value, list):
        return [mask_data(v, secrets) for v in value]
    if isinstance(value, dict):
        return {mask(k, secrets): mask_data(v, secrets) for k, v in value.items()}
    return value
