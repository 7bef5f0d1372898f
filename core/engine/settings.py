"""Every setting the studio reads from its environment, declared once: variable, type, default and meaning.

``settings()`` reads them afresh at every call, so a test's ``monkeypatch.setenv`` counts at once and nothing needs
resetting; the app passes the values of ``.streamlit/secrets.toml`` as overrides, which win over the environment
(``ui.common.state.settings``). Every value is checked when they are read: one that cannot be used raises ``ConfigError``
naming the variable and what it takes. Keys are ``SecretStr``: their value is taken out only where it is sent, and a
repr, a log line or an error shows ``**********``. ``docs/configuration.md``'s table is drawn from these declarations
(``tables()``, written and checked by ``python -m tools.docs``).
"""

from __future__ import annotations

import math
import os
import re
from functools import lru_cache
from pathlib import Path
from typing import Annotated, Any, Literal, get_args
from urllib.parse import urlsplit

from pydantic import BeforeValidator, Field, SecretStr, ValidationError, model_validator
from pydantic_settings import BaseSettings, NoDecode, SettingsConfigDict

from core.engine.credentials import mask_userinfo

REPO_ROOT = Path(__file__).resolve().parents[2]
CACHE = REPO_ROOT / ".cache"

CacheMode = Literal["auto", "always", "off"]  # auto: deterministic (temperature 0) and seeded calls
ReasoningEffort = Literal["low", "medium", "high"]
ServingMode = Literal["auto", "shared"]
MIN_PASSCODE = 8
ASSUMED_WINDOW = 16384  # a window neither the setting nor the provider says: the authors' GPT-3.5-16k's


class ConfigError(ValueError):
    """A setting that cannot be used; the message names the setting and what it accepts."""


# -- how a raw value is read (blank values are dropped before these run: the default holds) --------------------


def _number(*, whole: bool, minimum: float, above: bool = False) -> Any:
    kind = "a whole number" if whole else "a number"
    bound = f"above {minimum:g}" if above else f"{minimum:g} or more"

    def read(raw: Any) -> int | float:
        try:
            value = int(raw) if whole else float(raw)
        except (TypeError, ValueError):
            raise ValueError(f"must be {kind} {bound}, not {str(raw)!r}") from None
        if not math.isfinite(value) or value < minimum or (above and value == minimum):
            raise ValueError(f"must be {kind} {bound}, not {str(raw)!r}")
        return value

    return read


def _one_of(kind: Any, why: str = "") -> Any:
    options = get_args(kind)
    said = " or ".join(options) if len(options) == 2 else "one of " + ", ".join(options)

    def read(raw: Any) -> str:
        value = str(raw).lower()
        if value not in options:
            raise ValueError(f"must be {said}, not {value!r}{why}")
        return value

    return read


def _flag(raw: Any) -> bool:
    value = str(raw).lower()
    if value in ("1", "true", "yes", "on"):
        return True
    if value in ("0", "false", "no", "off"):
        return False
    raise ValueError(f"must be 1 or 0, not {value!r}")


def address_problem(url: str) -> str | None:
    """Why an http(s) URL names no address (no host, or a port that is not 1 to 65535 in ASCII digits), or None."""
    parts = urlsplit(url)
    try:
        port = parts.port
    except ValueError:  # '+80', fullwidth digits, out of range: urllib's own words name none of them
        port = -1
    if not parts.hostname:
        return "has no host"
    if port == -1 or port == 0:
        return f"has a port that is not a number from 1 to 65535 ({parts.netloc.rpartition(':')[2]!r})"
    return None


def _http_url(raw: Any) -> str:
    if not str(raw).startswith(("http://", "https://")):
        raise ValueError(f"must start with http:// or https://, not {mask_userinfo(str(raw))!r}")
    if problem := address_problem(str(raw)):
        raise ValueError(f"{problem}: {mask_userinfo(str(raw))!r}")
    return str(raw)


_SCHEME = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*://")


def search_place(raw: Any) -> str:
    """A folder, or a Qdrant server's http(s) URL: any other ``scheme://`` would be read as a folder named after it."""
    text = str(raw)
    if _SCHEME.match(text) and not text.startswith(("http://", "https://")):
        raise ValueError(f"must be a folder or a Qdrant server's http:// or https:// URL, not {mask_userinfo(text)!r}")
    return _http_url(text) if _SCHEME.match(text) else text


_EMAIL = re.compile(r"[^@\s,]+@[^@\s,]+\.[^@\s,]+")


def _emails(raw: Any) -> frozenset[str]:
    items = raw.split(",") if isinstance(raw, str) else raw
    emails = frozenset(e.strip().lower() for e in items if e.strip())
    if wrong := sorted(e for e in emails if not _EMAIL.fullmatch(e)):
        raise ValueError(f"must be emails separated by commas; {', '.join(map(repr, wrong))} is not one")
    return emails


def _passcode(raw: Any) -> Any:
    text = raw.get_secret_value() if isinstance(raw, SecretStr) else str(raw)
    if len(text) < MIN_PASSCODE:  # the value itself never enters the message
        raise ValueError(f"must be at least {MIN_PASSCODE} characters (it guards every setting of a shared studio)")
    return raw


def _window(raw: Any) -> int | None:
    return _number(whole=True, minimum=0)(raw) or None  # 0: not given


Positive = Annotated[float, BeforeValidator(_number(whole=False, minimum=0, above=True))]
Count = Annotated[int, BeforeValidator(_number(whole=True, minimum=0))]
Lowered = Annotated[str | None, BeforeValidator(lambda v: str(v).lower())]
Mode = Annotated[
    ServingMode, BeforeValidator(_one_of(ServingMode, ": a studio reachable from other machines is always shared"))
]


def var(name: str, meaning: str, default: Any = None, shown: str | None = None) -> Any:
    """A setting read from the variable ``name``; ``shown`` is its default as the documentation words it."""
    return Field(default, validation_alias=name, description=meaning, json_schema_extra={"shown": shown})


KEY = "never shown, logged or written"


def usable_cores() -> int:
    """The cores this process may run on: ``sched_getaffinity`` where the system has it (Linux), else every core."""
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1


class Settings(BaseSettings):
    """The studio's settings. Build them with ``settings()``, which turns a value that cannot be used into a
    ``ConfigError``; a provider's key is read by variable name with ``secret``."""

    model_config = SettingsConfigDict(
        case_sensitive=True,
        extra="ignore",
        env_ignore_empty=True,
        frozen=True,
        protected_namespaces=(),
        hide_input_in_errors=True,
        validate_default=False,
    )

    # -- the LLM ----------------------------------------------------------------------------------------------
    base_url: Annotated[str | None, BeforeValidator(_http_url)] = var(
        "MEDRAG_BASE_URL",
        "OpenAI-compatible endpoint: OpenAI, Azure OpenAI, Anthropic's and Gemini's OpenAI layers, "
        "Groq, DeepSeek, OpenRouter, vLLM, Ollama, LM Studio, a llama.cpp server; credentials in it "
        "(`http://user:key@host/v1`) are used, never shown or stored",
        shown="unset: the embedded model",
    )
    model: str = var("MEDRAG_MODEL", "model name at that endpoint", "", shown="the embedded model's name")
    provider: Lowered = var(
        "MEDRAG_PROVIDER",
        "the backend family (`openai`, `azure`, `anthropic`, `gemini`, `groq`, `deepseek`, "
        "`openrouter`, `ollama`, `lmstudio`, `vllm`, `llamacpp`, `generic`): what it accepts (reply formats, sampling "
        "fields, token limits); see [providers](providers.md)",
        shown="detected from the URL",
    )
    api_key: SecretStr | None = var("MEDRAG_API_KEY", f"key for `MEDRAG_BASE_URL`, and for no other URL; {KEY}")
    openai_api_key: SecretStr | None = var(
        "OPENAI_API_KEY",
        "the key for `MEDRAG_BASE_URL` when `MEDRAG_API_KEY` is not set, and OpenAI's own key, sent "
        f"to OpenAI's hosts only; {KEY}",
    )
    azure_openai_api_key: SecretStr | None = var(
        "AZURE_OPENAI_API_KEY", f"Azure OpenAI's key, sent to Azure's hosts only; {KEY}"
    )
    anthropic_api_key: SecretStr | None = var("ANTHROPIC_API_KEY", f"Anthropic's key, sent to its hosts only; {KEY}")
    gemini_api_key: SecretStr | None = var("GEMINI_API_KEY", f"Gemini's key, sent to Google's API host only; {KEY}")
    groq_api_key: SecretStr | None = var("GROQ_API_KEY", f"Groq's key, sent to its hosts only; {KEY}")
    deepseek_api_key: SecretStr | None = var("DEEPSEEK_API_KEY", f"DeepSeek's key, sent to its hosts only; {KEY}")
    openrouter_api_key: SecretStr | None = var("OPENROUTER_API_KEY", f"OpenRouter's key, sent to its hosts only; {KEY}")
    reasoning_effort: Annotated[ReasoningEffort | None, BeforeValidator(_one_of(ReasoningEffort))] = var(
        "MEDRAG_REASONING_EFFORT",
        "`low`, `medium` or `high` for reasoning models that take it (o-series, gpt-5, Gemini 2.5)",
        shown="the server's default",
    )
    timeout: Positive = var(
        "MEDRAG_TIMEOUT",
        "seconds one model call may take end to end (reading the prompt, retries, writing the reply); past it the "
        "call fails",
        300.0,
        shown="300",
    )
    max_retries: Count = var("MEDRAG_MAX_RETRIES", "retries of a call on 429, 5xx and connection errors", 2, shown="2")
    context_window: Annotated[int | None, BeforeValidator(_window)] = var(
        "MEDRAG_CONTEXT_WINDOW",
        "tokens one call to the endpoint can hold; sizes what each agent reads",
        shown=f"the provider's, else {ASSUMED_WINDOW:,} (the authors' GPT-3.5-16k); `0` too",
    )
    cache: Annotated[CacheMode, BeforeValidator(_one_of(CacheMode))] = var(
        "MEDRAG_CACHE",
        "response cache: `auto` (temperature-0 calls and seeded sampled calls), `always`, `off`",
        "auto",
        shown="`auto`",
    )
    llama_verbosity: Count = var(
        "MEDRAG_LLAMA_VERBOSITY", "llama.cpp's own log level for the embedded server", 0, shown="`0` (quiet)"
    )
    threads: Annotated[int, BeforeValidator(_number(whole=True, minimum=1))] | None = var(
        "MEDRAG_THREADS",
        "cores the embedded model and index builds compute on: fewer leave the rest to other work on this "
        "machine (two models each computing on every core slow each other several times over)",
        shown="every core",
    )

    # -- retrieval -------------------------------------------------------------------------------------------
    search_url: Annotated[str | None, BeforeValidator(search_place)] = var(
        "MEDRAG_SEARCH_URL",
        "where retrieval runs: empty, the in-process index; a folder, Qdrant's local mode there; "
        "`http(s)://`, a Qdrant server or cluster ([retrieval at scale](retrieval-at-scale.md))",
        shown="empty",
    )
    search_api_key: SecretStr | None = var("MEDRAG_SEARCH_API_KEY", f"the Qdrant server's API key; {KEY}")
    hub_endpoint: Annotated[str, BeforeValidator(_http_url)] = var(
        "HF_ENDPOINT",
        "the Hugging Face Hub that `python -m core corpora get` downloads MedRAG's corpora from "
        "([corpora by name](corpora.md))",
        "https://huggingface.co",
        shown="`https://huggingface.co`",
    )

    # -- folders ----------------------------------------------------------------------------------------------
    studio_home: Path = var("MEDRAG_STUDIO_HOME", "folder for the database and the response cache", CACHE)
    model_dir: Path = var(
        "MEDRAG_MODEL_DIR",
        "folder of the assembled embedded model (built artefacts are shared by every studio home)",
        CACHE / "models",
    )
    index_dir: Path = var("MEDRAG_INDEX_DIR", "folder of the built corpus indexes", CACHE / "indexes")
    corpora_dir: Path = var(
        "MEDRAG_CORPORA_DIR",
        "folder of the corpora the setup generates (the HPO definitions) and those got by name",
        CACHE / "corpora",
    )
    shared_corpora: Path = var(
        "MEDRAG_SHARED_CORPORA",
        "folder of the corpora found by name without a download (MedQuAD, OpenStax)",
        REPO_ROOT.parent / "shared" / "data" / "corpora",
        shown="`../shared/data/corpora` beside the checkout",
    )
    workshop_pack: Path = var(
        "MEDRAG_WORKSHOP_PACK", "folder of the recorded workshop pack", REPO_ROOT / "data" / "workshop_pack"
    )

    # -- the app and serving ----------------------------------------------------------------------------------
    background_index: Annotated[bool, BeforeValidator(_flag)] = var(
        "MEDRAG_BACKGROUND_INDEX",
        "`0`: the app builds the default corpus index when a run first needs it, not in the background at start",
        True,
        shown="`1`",
    )
    mode: Mode = var(
        "MEDRAG_MODE",
        "`shared`: a studio on a loopback address is shared too (behind a reverse proxy); "
        "`auto`: single-user on a loopback address, shared on any other ([serving](serving.md))",
        "auto",
        shown="`auto`",
    )
    owner_passcode: Annotated[SecretStr | None, BeforeValidator(_passcode)] = var(
        "MEDRAG_OWNER_PASSCODE",
        f"the passcode the owner of a shared studio signs in with (at least {MIN_PASSCODE} characters); {KEY}",
        shown="none: `python -m core serve` makes one for each start",
    )
    owner_emails: Annotated[frozenset[str], NoDecode, BeforeValidator(_emails)] = var(
        "MEDRAG_OWNER_EMAILS",
        "comma-separated emails whose OpenID login (`[auth]` in `.streamlit/secrets.toml`) signs in as the owner",
        frozenset(),
        shown="none",
    )
    join_url: Annotated[str | None, BeforeValidator(_http_url)] = var(
        "MEDRAG_JOIN_URL",
        "the address participants open to join a room; `python -m core serve` sets it to this "
        "machine's address on its network",
        shown="the address the presenter's browser used",
    )

    @model_validator(mode="before")
    @classmethod
    def _blank_is_unset(cls, data: Any) -> Any:
        """Values as typed, spaces aside; an empty one leaves the default (secrets included)."""
        if not isinstance(data, dict):
            return data
        return {
            k: v.strip() if isinstance(v, str) else v
            for k, v in data.items()
            if not (isinstance(v, str) and not v.strip())
        }

    def compute_threads(self) -> int:
        """Threads for the model and for embedding: ``MEDRAG_THREADS``, else every core this process may run on (a
        container's or ``taskset``'s share, not the machine's: more threads than cores spin against each other)."""
        return self.threads or usable_cores()

    def secret(self, name: str) -> str:
        """The value of the key variable ``name`` (``''`` when unset): for the one place that sends it."""
        value = getattr(self, NAMES[name])
        return value.get_secret_value() if isinstance(value, SecretStr) else ""

    def secrets(self) -> list[str]:
        """Every key's value that is set, for masking wherever text leaves the process."""
        return [v for name in SECRETS if (v := self.secret(name))]


NAMES = {f.validation_alias: name for name, f in Settings.model_fields.items()}  # variable -> field
SECRETS = tuple(
    f.validation_alias for f in Settings.model_fields.values() if SecretStr in (f.annotation, *get_args(f.annotation))
)


def variable(field: str) -> str:
    """The environment variable a field is read from."""
    return Settings.model_fields[field].validation_alias


def settings(**overrides: Any) -> Settings:
    """The settings as the environment gives them now, ``overrides`` (by variable name) winning over it. Built
    once per distinct set of values (building takes about a millisecond, and folders are asked for often): the
    values themselves are the cache key, so a changed variable is read at once."""
    given = tuple(sorted((k, v) for k, v in overrides.items() if k in NAMES))  # other keys are not settings
    return _built(tuple(os.environ.get(name) for name in NAMES), given)


@lru_cache(maxsize=16)
def _built(environment: tuple[str | None, ...], overrides: tuple[tuple[str, Any], ...]) -> Settings:
    try:
        return Settings(**dict(overrides))  # reads the environment the key was taken from
    except ValidationError as exc:
        raise ConfigError(said(exc)) from None


def said(exc: ValidationError) -> str:
    """The first problem, worded as the project words them: the variable, then what it takes."""
    error = exc.errors(include_input=False)[0]
    name = error["loc"][0] if error["loc"] else "a setting"
    reason = error.get("ctx", {}).get("error") if error["type"] == "value_error" else None
    return f"{name} {reason}" if reason is not None else f"{name}: {error['msg']}"


# -- docs/configuration.md ----------------------------------------------------------------------------------


def _default(field: Any) -> str:
    shown = (field.json_schema_extra or {}).get("shown")
    if shown is not None:
        return shown
    if field.default is None:
        return "none"
    if isinstance(field.default, Path):
        return f"`{field.default.relative_to(REPO_ROOT).as_posix()}/`"
    return f"`{field.default}`"


def table() -> str:
    rows = [f"| `{f.validation_alias}` | {f.description} | {_default(f)} |" for f in Settings.model_fields.values()]
    return "\n".join(["| variable | meaning | default |", "| --- | --- | --- |", *rows])


def tables() -> dict[str, str]:
    """The tables of docs/configuration.md, by marker name (``tools.docs`` writes and checks them)."""
    return {"settings": table()}
