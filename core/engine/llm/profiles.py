"""What each backend family accepts, declared once: a ``Profile`` per family, picked from the base URL and the
model name (or named by ``MEDRAG_PROVIDER`` / Settings).

The client asks the profile how to send a call (which structured-output dialect, which token-limit field, which
sampling fields) and never branches on a provider itself. The rules come from each provider's own documentation;
``doc`` names the page, and the contract tests' fake servers enforce the same rules.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from typing import Literal
from urllib.parse import urlsplit

from core.engine.llm.answer_formats import EMBEDDED_ANSWER_FORMAT, PAPERS_FORMAT, AnswerFormat
from core.engine.settings import address_problem

# How a backend takes a reply's shape, strongest first:
#   grammar      - llama.cpp / vLLM / Ollama / LM Studio compile the JSON schema into a grammar: lengths bind too
#   strict       - OpenAI's strict subset (root object, objects closed, every field required, few keywords)
#   json_schema  - a JSON schema without ``strict`` (the server constrains what it can, or nothing)
#   json_object  - only "some JSON object": the schema goes in the prompt
#   prompt       - no response_format at all: the schema goes in the prompt
Dialect = Literal["grammar", "strict", "json_schema", "json_object", "prompt"]
DIALECTS: tuple[Dialect, ...] = ("grammar", "strict", "json_schema", "json_object", "prompt")
SamplingField = Literal["temperature", "top_p", "presence_penalty", "seed"]
ALL_SAMPLING: frozenset[str] = frozenset({"temperature", "top_p", "presence_penalty", "seed"})
Lengths = Literal["compact", "paper"]

# JSON-schema keywords OpenAI's strict mode takes beyond the structural ones
# (https://platform.openai.com/docs/guides/structured-outputs#supported-schemas).
OPENAI_KEYWORDS = frozenset(
    {
        "pattern",
        "format",
        "minimum",
        "maximum",
        "exclusiveMinimum",
        "exclusiveMaximum",
        "multipleOf",
        "minItems",
        "maxItems",
    }
)


@dataclass(frozen=True)
class Profile:
    """One backend family, as its documentation describes it."""

    name: str  # MEDRAG_PROVIDER's value
    label: str  # shown on Settings and in the trace
    dialect: Dialect  # the first rung of the structured-output ladder
    token_field: Literal["max_tokens", "max_completion_tokens"] = "max_tokens"
    sampling: frozenset[str] = ALL_SAMPLING  # the sampling fields it takes; the rest are not sent
    max_temperature: float | None = None  # a server that caps temperature (Anthropic: 1)
    schema_keywords: frozenset[str] = frozenset()  # keywords its strict dialect takes beyond the structural ones
    streams_usage: bool = True  # answers ``stream_options.include_usage`` with a usage chunk
    reasoning: bool = False  # a reasoning model: hidden reasoning shares the token budget, sampling is fixed
    reasoning_effort: bool = False  # takes ``reasoning_effort``
    context_window: int | None = None  # tokens one call holds, when the family has one size (else Settings)
    max_output_tokens: int | None = None  # the most a reply may take (hidden reasoning included), when documented
    lengths: Lengths = "paper"  # reply lengths: the papers', or the compact ones a small model needs
    answer_format: AnswerFormat = PAPERS_FORMAT  # the final reader's order when a method's knob is automatic
    hosts: tuple[str, ...] = ()  # base-URL host suffixes that identify it
    ports: tuple[int, ...] = ()  # local servers' default ports
    example_url: str = ""  # a base URL to start from
    key_env: tuple[str, ...] = ()  # environment variables / secrets that hold its key, besides MEDRAG_API_KEY
    key_url: str = ""  # where a user gets a key
    doc: str = ""  # the page its rules come from
    # Model-name patterns of the family's reasoning models, and what changes for them.
    reasoning_models: tuple[str, ...] = ()
    reasoning_changes: dict[str, object] = field(default_factory=dict)

    def for_model(self, model: str) -> Profile:
        """This family's profile for ``model``: its reasoning variant when the name says it is a reasoning model."""
        if self.reasoning_models and any(re.match(p, model.split("/")[-1], re.I) for p in self.reasoning_models):
            return replace(self, reasoning=True, **self.reasoning_changes)  # type: ignore[arg-type]
        return self

    @property
    def needs_key(self) -> bool:
        return bool(self.key_env)

    def takes(self, sampling_field: str) -> bool:
        return sampling_field in self.sampling


# OpenAI's reasoning models take max_completion_tokens, no temperature other than the default, no top_p or penalties
# (https://platform.openai.com/docs/guides/reasoning); seed is accepted.
# https://platform.openai.com/docs/models: gpt-4o writes at most 16,384 tokens, o3 and o4-mini 100,000.
_OPENAI_REASONING = dict(sampling=frozenset({"seed"}), reasoning_effort=True, max_output_tokens=100_000)
# OpenAI's models, as OpenAI and Azure OpenAI both serve them: one token field, one set of limits.
_OPENAI_MODELS = dict(
    token_field="max_completion_tokens",
    context_window=128_000,
    max_output_tokens=16_384,
    reasoning_models=(r"o\d", r"gpt-5(?!-chat)"),  # gpt-5-chat is the non-reasoning model behind ChatGPT
    reasoning_changes=_OPENAI_REASONING,
)


def _listening_on(port: int) -> dict[str, object]:
    """A local server found by its default port, and the base URL it answers on there."""
    return dict(ports=(port,), example_url=f"http://127.0.0.1:{port}/v1")


PROFILES: dict[str, Profile] = {
    p.name: p
    for p in (
        Profile(
            "embedded",
            "Embedded model (llama.cpp, in-process)",
            "grammar",
            lengths="compact",
            answer_format=EMBEDDED_ANSWER_FORMAT,
            doc="https://github.com/ggml-org/llama.cpp/blob/master/tools/server/README.md",
        ),
        Profile(
            "llamacpp",
            "llama.cpp server",
            "grammar",
            **_listening_on(8080),
            doc="https://github.com/ggml-org/llama.cpp/blob/master/tools/server/README.md",
        ),
        Profile(
            "ollama",
            "Ollama",
            "grammar",
            **_listening_on(11434),
            doc="https://github.com/ollama/ollama/blob/main/docs/openai.md",
        ),
        Profile(
            "lmstudio",
            "LM Studio",
            "grammar",
            **_listening_on(1234),
            doc="https://lmstudio.ai/docs/app/api/structured-output",
        ),
        Profile(
            "vllm",
            "vLLM",
            "grammar",
            example_url="http://127.0.0.1:8000/v1",
            doc="https://docs.vllm.ai/en/latest/features/structured_outputs.html",
        ),
        Profile(
            "openai",
            "OpenAI",
            "strict",
            schema_keywords=OPENAI_KEYWORDS,
            hosts=("api.openai.com",),
            example_url="https://api.openai.com/v1",
            key_env=("OPENAI_API_KEY",),
            key_url="https://platform.openai.com/api-keys",
            doc="https://platform.openai.com/docs/guides/structured-outputs",
            **_OPENAI_MODELS,
        ),
        # Azure OpenAI's strict subset takes none of the type-specific keywords
        # (https://learn.microsoft.com/azure/ai-foundry/openai/how-to/structured-outputs#supported-schemas-and-limitations).
        Profile(
            "azure",
            "Azure OpenAI",
            "strict",
            hosts=("openai.azure.com", "cognitiveservices.azure.com", "services.ai.azure.com"),
            example_url="https://YOUR-RESOURCE.openai.azure.com/openai/v1",
            key_env=("AZURE_OPENAI_API_KEY",),
            key_url="https://portal.azure.com/#view/Microsoft_Azure_ProjectOxford/CognitiveServicesHub/~/OpenAI",
            doc="https://learn.microsoft.com/azure/ai-foundry/openai/how-to/structured-outputs",
            **_OPENAI_MODELS,
        ),
        # Anthropic's OpenAI layer ignores response_format, seed and presence_penalty and caps temperature at 1
        # (https://docs.anthropic.com/en/api/openai-sdk).
        Profile(
            "anthropic",
            "Anthropic (OpenAI layer)",
            "prompt",
            sampling=frozenset({"temperature", "top_p"}),
            max_temperature=1.0,
            hosts=("api.anthropic.com",),
            example_url="https://api.anthropic.com/v1",
            key_env=("ANTHROPIC_API_KEY",),
            key_url="https://console.anthropic.com/settings/keys",
            context_window=200_000,
            max_output_tokens=8_192,  # the least of the current models' limits
            doc="https://docs.anthropic.com/en/api/openai-sdk",
        ),
        # Gemini's OpenAI layer refuses fields it does not know, seed among them (https://ai.google.dev/gemini-api/docs/openai).
        Profile(
            "gemini",
            "Google Gemini (OpenAI layer)",
            "json_schema",
            sampling=frozenset({"temperature", "top_p"}),
            reasoning_effort=True,
            hosts=("generativelanguage.googleapis.com",),
            example_url="https://generativelanguage.googleapis.com/v1beta/openai",
            key_env=("GEMINI_API_KEY",),
            key_url="https://aistudio.google.com/apikey",
            context_window=1_048_576,
            max_output_tokens=8_192,
            doc="https://ai.google.dev/gemini-api/docs/openai",
            # https://ai.google.dev/gemini-api/docs/models: 2.5 models think, and write at most 65,536 tokens
            reasoning_models=(r"gemini-(2\.5|3)",),
            reasoning_changes=dict(max_output_tokens=65_536),
        ),
        Profile(
            "groq",
            "Groq",
            "strict",
            schema_keywords=OPENAI_KEYWORDS,
            hosts=("api.groq.com",),
            example_url="https://api.groq.com/openai/v1",
            key_env=("GROQ_API_KEY",),
            key_url="https://console.groq.com/keys",
            context_window=131_072,
            max_output_tokens=8_192,
            doc="https://console.groq.com/docs/structured-outputs",
        ),
        # DeepSeek takes json_object only; deepseek-reasoner takes no JSON output and ignores sampling
        # (https://api-docs.deepseek.com/guides/json_mode, https://api-docs.deepseek.com/guides/reasoning_model).
        Profile(
            "deepseek",
            "DeepSeek",
            "json_object",
            sampling=frozenset({"temperature", "top_p", "presence_penalty"}),
            hosts=("api.deepseek.com",),
            example_url="https://api.deepseek.com/v1",
            key_env=("DEEPSEEK_API_KEY",),
            key_url="https://platform.deepseek.com/api_keys",
            context_window=128_000,
            max_output_tokens=8_192,
            doc="https://api-docs.deepseek.com/guides/json_mode",
            reasoning_models=(r"deepseek-reasoner", r"deepseek-r1"),
            reasoning_changes=dict(dialect="prompt", sampling=frozenset(), max_output_tokens=65_536),
        ),
        Profile(
            "openrouter",
            "OpenRouter",
            "strict",
            schema_keywords=OPENAI_KEYWORDS,
            hosts=("openrouter.ai",),
            example_url="https://openrouter.ai/api/v1",
            key_env=("OPENROUTER_API_KEY",),
            key_url="https://openrouter.ai/settings/keys",
            doc="https://openrouter.ai/docs/structured-outputs",
        ),
        # Any other OpenAI-compatible server: the safest first rung, stepping down on refusal.
        Profile(
            "generic",
            "Other OpenAI-compatible server",
            "strict",
            doc="https://platform.openai.com/docs/api-reference/chat/create",
        ),
    )
}

GENERIC = PROFILES["generic"]


class UnknownProvider(ValueError):
    pass


def named(name: str) -> Profile:
    try:
        return PROFILES[name.strip().lower()]
    except KeyError:
        raise UnknownProvider(f"unknown provider {name!r}; one of {', '.join(PROFILES)}") from None


def detect(base_url: str | None) -> Profile:
    """The family a base URL belongs to: the embedded server when there is none; a provider's host; a local server's
    default port; otherwise the generic profile (the safe ladder)."""
    if not base_url:
        return PROFILES["embedded"]
    parts = urlsplit(base_url)
    host = (parts.hostname or "").lower()
    for profile in PROFILES.values():
        if any(host == h or host.endswith("." + h) for h in profile.hosts):
            return profile
    port = None if address_problem(base_url) else parts.port  # a port urllib cannot read is no server's default
    for profile in PROFILES.values():
        if port in profile.ports:
            return profile
    return GENERIC


def resolve(base_url: str | None, model: str, provider: str | None = None) -> Profile:
    """The profile a call uses: the one named (``MEDRAG_PROVIDER``, Settings) or detected, for this model."""
    family = named(provider) if provider else detect(base_url)
    return family.for_model(model)
