"""Credentials never travel in a run file: user:password in a URL, key-like query parameters, bearer tokens and
the values of the API-key variables configured here are masked wherever they occur in the text."""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterable, Mapping

MASK = "***"
KEY_VARIABLES = ("MEDRAG_API_KEY", "OPENAI_API_KEY")
_URL_USERINFO = re.compile(r"(?P<scheme>\b[A-Za-z][A-Za-z0-9+.-]*://)[^/\s@\"'<>]+@")
_KEY_PARAM = re.compile(r"(?P<name>[?&](?:api[_-]?key|key|token|access[_-]?token|secret|password|sig)=)[^&#\s\"'<>]+",
                        re.IGNORECASE)
_BEARER = re.compile(r"(?P<name>\bBearer\s+)[A-Za-z0-9._~+/=-]{8,}")
_MIN_SECRET = 6  # shorter values (e.g. "local") would mask ordinary words


def known_secrets(env: Mapping[str, str] = os.environ) -> list[str]:
    return [v for name in KEY_VARIABLES if len(v := env.get(name, "")) >= _MIN_SECRET]


def mask(text: str, secrets: Iterable[str] = ()) -> str:
    """``text`` with every credential replaced by ``***``; the rest is unchanged (safe inside JSON strings)."""
    for secret in sorted(set(secrets), key=len, reverse=True):
        for form in (secret, json.dumps(secret)[1:-1]):  # as it is, and as it reads inside a JSON string
            text = text.replace(form, MASK)
    text = _URL_USERINFO.sub(lambda m: f"{m['scheme']}{MASK}@", text)
    text = _KEY_PARAM.sub(lambda m: f"{m['name']}{MASK}", text)
    return _BEARER.sub(lambda m: f"{m['name']}{MASK}", text)
