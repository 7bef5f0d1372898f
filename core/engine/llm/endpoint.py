"""Where LLM calls go, read from the settings (``core.engine.settings``), and credentials kept out of sight.

A base URL may carry credentials (``http://user:key@host/v1``); they are used for the connection and never
appear in a message, an event, a stored row, a log line or a cache key: everything shows ``display_url``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import get_args
from urllib.parse import unquote, urlsplit, urlunsplit

from core.engine.credentials import mask_userinfo
from core.engine.llm import profiles
from core.engine.llm.profiles import Profile
from core.engine.settings import CacheMode, ConfigError, ReasoningEffort, Settings, address_problem, settings

CACHE_MODES: tuple[str, ...] = get_args(CacheMode)
REASONING_EFFORTS: tuple[str, ...] = get_args(ReasoningEffort)
DEFAULT_TIMEOUT: float = Settings.model_fields["timeout"].default
DEFAULT_RETRIES: int = Settings.model_fields["max_retries"].default


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


def same_endpoint(a: str | None, b: str | None) -> bool:
    """Whether two base URLs name the same endpoint (scheme, host, port and path; credentials and a trailing slash
    aside)."""
    if not a or not b or address_problem(a) or address_problem(b):  # a port urllib cannot read names no endpoint
        return False

    def norm(url: str) -> tuple[str, str, int | None, str]:
        parts = urlsplit(split_credentials(url.strip())[0])
        return parts.scheme.lower(), (parts.hostname or "").lower(), parts.port, parts.path.rstrip("/")

    return norm(a) == norm(b)


def server_key(base_url: str | None, profile: Profile, settings: Settings) -> tuple[str, str] | None:
    """The server's own API key for ``base_url`` and the variable it was configured under, or None.

    A key is bound to the endpoint it was configured for: ``MEDRAG_API_KEY`` (or ``OPENAI_API_KEY``) to
    ``MEDRAG_BASE_URL`` only, a provider's own variable (``ANTHROPIC_API_KEY``...) to that provider's hosts only. A
    session that points anywhere else brings its own key, so no URL a visitor types ever receives the server's."""
    if not base_url:
        return None
    if same_endpoint(base_url, settings.base_url):
        for name in ("MEDRAG_API_KEY", "OPENAI_API_KEY"):
            if key := settings.secret(name):
                return key, name
    host = (urlsplit(base_url).hostname or "").lower()
    if any(host == h or host.endswith("." + h) for h in profile.hosts):
        for name in profile.key_env:
            if key := settings.secret(name):
                return key, name
    return None


@dataclass(frozen=True)
class Endpoint:
    """Where to send calls. ``base_url=None`` means the embedded model. ``provider`` names a backend profile
    (``core.engine.llm.profiles``); empty, it is detected from the URL."""

    base_url: str | None = None
    model: str = ""
    api_key: str = field(default="", repr=False)  # never in a repr, a log line or an error
    timeout: float = DEFAULT_TIMEOUT
    max_retries: int = DEFAULT_RETRIES
    context_window: int | None = None  # tokens one call can hold (prompt and reply), when known
    provider: str | None = None
    reasoning_effort: ReasoningEffort | None = None  # for reasoning models that take it; None: the server's default

    def __post_init__(self) -> None:
        if self.provider:
            profiles.named(self.provider)  # an unknown name is a ConfigError now, not at the first call
        if self.reasoning_effort not in (None, *REASONING_EFFORTS):
            raise ConfigError(
                f"the reasoning effort must be one of {', '.join(REASONING_EFFORTS)}, not {self.reasoning_effort!r}"
            )

    @property
    def embedded(self) -> bool:
        return not self.base_url

    @property
    def problem(self) -> str | None:
        """Why calls cannot go as configured, or None: a URL that carries a user name and password and a key as well
        (a request carries one Authorization, so one of them would silently not be sent)."""
        if self.base_url and split_credentials(self.base_url)[1] and self.api_key:
            return (
                "the base URL carries a user name and password and an API key is set too; a request carries only "
                "one of them, so remove one"
            )
        return None

    @property
    def profile(self) -> Profile:
        """What this endpoint accepts, for its model."""
        return profiles.resolve(self.base_url, self.model, self.provider)

    @property
    def display_url(self) -> str:
        return mask_url(self.base_url) if self.base_url else ""

    @property
    def secrets(self) -> tuple[str, ...]:
        """Strings that must never be shown: the API key and any password or user name in the URL."""
        _, credentials = split_credentials(self.base_url or "")
        return tuple(s for s in (self.api_key, *(credentials or ())) if s)

    @classmethod
    def from_settings(cls, configured: Settings | None = None) -> Endpoint:
        """The endpoint the settings name (the environment's when none are given). Raises ``ConfigError`` naming
        the variable when a value cannot be used."""
        s = configured or settings()
        if s.provider and s.provider not in profiles.PROFILES:
            raise ConfigError(f"MEDRAG_PROVIDER must be one of {', '.join(profiles.PROFILES)}, not {s.provider!r}")
        key = server_key(s.base_url, profiles.resolve(s.base_url, s.model, s.provider), s)
        if key and split_credentials(s.base_url or "")[1]:
            raise ConfigError(
                f"MEDRAG_BASE_URL carries a user name and password and {key[1]} is set too; a request "
                "carries only one of them, so remove one"
            )
        return cls(
            base_url=s.base_url,
            model=s.model,
            api_key=key[0] if key else "",
            provider=s.provider,
            timeout=s.timeout,
            max_retries=s.max_retries,
            context_window=s.context_window,
            reasoning_effort=s.reasoning_effort,
        )


def check_environment(configured: Settings | None = None) -> None:
    """Every setting read and checked at once, the LLM's included (commands and the app call it at start)."""
    Endpoint.from_settings(configured or settings())
