"""Fake servers on 127.0.0.1, one per backend family, each holding every request to the rules its family's own
documentation states, and answering through a scripted model.

A fake refuses what its documentation says the family refuses, with the error body the family sends; ignores what it
says is ignored (and records that it did); and otherwise streams a reply as the family does, with a usage chunk when
``stream_options.include_usage`` asks for one. The model writes a JSON reply valid against the schema it can see:
the one in ``response_format`` where the family honours it, else one written in the prompt (the way
``core.engine.llm.schemas.instruction`` writes it), and plain text when it sees none. It honours enums, item counts and
lengths, also where a strict dialect could only say them in a description, as a careful model reads them. Reasoning
models spend hidden tokens out of the same budget; when they use it all the reply is empty and cut (``length``).

The fakes import nothing from ``core``: they stand for the servers, and the provider matrix runs them against other
checkouts of the client too (``benchmarks/provider_matrix.py``). Every rule cites the page it comes from.
"""

from __future__ import annotations

import json
import re
from typing import Any

from tests.fake_endpoint import FakeEndpoint, Step

# -- the documentation each fake follows ----------------------------------------------------------------------------

OPENAI_STRUCTURED = "https://platform.openai.com/docs/guides/structured-outputs#supported-schemas"
OPENAI_CHAT = "https://platform.openai.com/docs/api-reference/chat/create"
OPENAI_REASONING = "https://platform.openai.com/docs/guides/reasoning"
# Each model's output limit is on its model page; what OpenAI answers above it, as users meet it.
OPENAI_MODEL_LIMITS = (
    "https://platform.openai.com/docs/models/gpt-4.1-mini",
    "https://platform.openai.com/docs/models/o4-mini",
)
OPENAI_TOO_LARGE = "https://github.com/tailcallhq/forgecode/issues/1185"
# OpenAI's reasoning guide does not list the parameters these models refuse; Microsoft's page for the same models does.
AZURE_REASONING = "https://learn.microsoft.com/azure/ai-foundry/openai/how-to/reasoning#not-supported"
# The error OpenAI's strict mode sends for a keyword it does not take, 'default' among them (a maintainers' thread).
OPENAI_DEFAULT_REFUSED = "https://github.com/567-labs/instructor/issues/1074"
AZURE_STRUCTURED = (
    "https://learn.microsoft.com/azure/ai-foundry/openai/how-to/structured-outputs#json-schema-support-and-limitations"
)
GEMINI_OPENAI = "https://ai.google.dev/gemini-api/docs/openai"
# What Gemini's OpenAI layer answers for a field it does not know, as users report it (its page only says that
# support is partial: "If you have questions about supported parameters ...").
GEMINI_UNKNOWN_FIELD = "https://github.com/Vali-98/ChatterUI/issues/227"
GEMINI_SCHEMA_FIELDS = "https://firebase.google.com/docs/ai-logic/generate-structured-output"
GEMINI_MODEL_LIMITS = "https://ai.google.dev/gemini-api/docs/models#gemini-2.5-flash"  # output token limit 65,536
GEMINI_TOO_LARGE = "https://github.com/BerriAI/litellm/pull/10548"  # the error above it
ANTHROPIC_OPENAI = "https://docs.anthropic.com/en/api/openai-sdk"
ANTHROPIC_MODEL_LIMITS = "https://docs.anthropic.com/en/docs/about-claude/models/overview"  # max output 64,000
DEEPSEEK_JSON = "https://api-docs.deepseek.com/guides/json_mode"
DEEPSEEK_CHAT = "https://api-docs.deepseek.com/api/create-chat-completion"
DEEPSEEK_THINKING = "https://api-docs.deepseek.com/guides/thinking_mode"
# What DeepSeek answers for a json_schema response format, as users report it.
DEEPSEEK_JSON_SCHEMA_REFUSED = "https://github.com/llm-exe/llm-exe/issues/662"
LLAMACPP_SERVER = "https://github.com/ggml-org/llama.cpp/blob/master/tools/server/README.md"
LLAMACPP_GRAMMARS = "https://github.com/ggml-org/llama.cpp/blob/master/grammars/README.md"
VLLM_STRUCTURED = "https://docs.vllm.ai/en/latest/features/structured_outputs.html"
VLLM_REASONING = "https://docs.vllm.ai/en/latest/features/reasoning_outputs.html"

# -- the scripted model ---------------------------------------------------------------------------------------------

SENTENCE = "Insulin lowers blood glucose by moving it into muscle and fat cells"
CHARS_PER_TOKEN = 4
_SAID_LENGTH = re.compile(r"at most (\d+) characters")
_SAID_MOST = re.compile(r"at most (\d+) items")
_SAID_LEAST = re.compile(r"at least (\d+) items")


def tokens(text: str) -> int:
    return max(1, len(text) // CHARS_PER_TOKEN)


class Writer:
    """What the scripted model writes for a JSON schema: every field, the first enum value (distinct ones along an
    array), the last non-null shape of a union (the one that goes on to say more), booleans true, and lists and texts
    as long as the schema (or, in a strict dialect, its description) allows, two items and one sentence at most."""

    def __init__(self, root: dict[str, Any]):
        self.root = root

    def value(self, node: dict[str, Any], index: int = 0) -> Any:
        node = self._resolve(node)
        if "const" in node:
            return node["const"]
        if "enum" in node:
            return node["enum"][index % len(node["enum"])]
        shapes = [b for b in node.get("anyOf", []) if self._resolve(b).get("type") != "null"]
        if shapes:
            return self.value(shapes[-1], index)
        kind = node.get("type")
        if isinstance(kind, list):
            kind = next(k for k in kind if k != "null")
        if kind == "object" or "properties" in node:
            return {name: self.value(sub, index) for name, sub in node.get("properties", {}).items()}
        if kind == "array":
            return [self.value(node.get("items", {}), i) for i in range(self._count(node))]
        if kind == "string":
            return self._text(node, index)
        if kind in ("integer", "number"):
            return node.get("minimum", 1)
        if kind == "boolean":
            return True
        return None

    def _resolve(self, node: dict[str, Any]) -> dict[str, Any]:
        while "$ref" in node:
            target: Any = self.root
            for part in (p for p in node["$ref"].lstrip("#").split("/") if p):
                target = target[part]
            node = {**target, **{k: v for k, v in node.items() if k != "$ref"}}
        return node

    @staticmethod
    def _count(node: dict[str, Any]) -> int:
        said = node.get("description", "")
        least = node.get("minItems", _said(_SAID_LEAST, said, 0))
        most = node.get("maxItems", _said(_SAID_MOST, said, 2))
        return max(least, min(most, 2))

    @staticmethod
    def _text(node: dict[str, Any], index: int) -> str:
        text = SENTENCE + (f" ({index + 1})" if index else "")
        limit = node.get("maxLength", _said(_SAID_LENGTH, node.get("description", ""), None))
        text = text[:limit] if limit else text
        return text.ljust(node.get("minLength", 0), ".")


class ShortWriter(Writer):
    """A model that takes the schema as a guide, not a grammar: the reply's shape, but one item where a list asks
    for more."""

    @staticmethod
    def _count(node: dict[str, Any]) -> int:
        return min(Writer._count(node), 1)


def _said(pattern: re.Pattern, text: str, default: Any) -> Any:
    found = pattern.search(text)
    return int(found.group(1)) if found else default


def prompt_text(messages: list[dict[str, Any]]) -> str:
    return "\n".join(
        m["content"] if isinstance(m.get("content"), str) else json.dumps(m.get("content")) for m in messages
    )


def schema_in_prompt(messages: list[dict[str, Any]]) -> dict[str, Any] | None:
    """A JSON schema written in the conversation (the last one), as ``core.engine.llm.schemas.instruction`` writes it."""
    text = prompt_text(messages)
    at = text.rfind("JSON schema")
    start = text.find("{", at) if at >= 0 else -1
    if start < 0:
        return None
    try:
        schema, _ = json.JSONDecoder().raw_decode(text[start:])
    except ValueError:
        return None
    return schema if isinstance(schema, dict) else None


# -- the servers ----------------------------------------------------------------------------------------------------


class Refused(Exception):
    """A request the family refuses: the HTTP status and the body it sends."""

    def __init__(self, status: int, body: Any):
        super().__init__(json.dumps(body))
        self.status, self.body = status, body


def refusal_message(body: Any) -> str:
    """The message of an error body in any family's shape (OpenAI's object, Google's list, Anthropic's object)."""
    error = (body[0] if isinstance(body, list) and body else body).get("error", {})
    return error.get("message", "") if isinstance(error, dict) else str(error)


def openai_error(message: str, param: str | None = None, code: str | None = None) -> Refused:
    return Refused(400, {"error": {"message": message, "type": "invalid_request_error", "param": param, "code": code}})


class FakeServer:
    """One backend family's server. ``family``: the client profile it stands for (``MEDRAG_PROVIDER``); ``docs``:
    the pages its rules come from. ``requests``/``headers``: everything received; ``refused``: the error bodies it
    sent; ``answered``: the requests it took; ``ignored``: the request fields it dropped without a word, as its
    documentation says it does."""

    family = ""
    label = ""
    model = ""
    docs: tuple[str, ...] = ()
    honours_format = True  # reads response_format (Anthropic's layer does not)
    token_fields: tuple[str, ...] = ("max_tokens", "max_completion_tokens")
    hidden_reasoning = 0  # tokens a reasoning model spends unseen before it writes
    max_output: int | None = None  # the model's output limit (its model page), hidden reasoning included
    shown_reasoning = ""  # what it shows of its reasoning, streamed before the reply
    writer = Writer  # how its model fills a schema

    def __init__(self, model: str | None = None, *, hidden_reasoning: int | None = None, max_output: int | None = None):
        self.model = model or self.model
        if hidden_reasoning is not None:
            self.hidden_reasoning = hidden_reasoning
        if max_output is not None:
            self.max_output = max_output
        self.refused: list[Any] = []
        self.answered: list[dict[str, Any]] = []
        self.ignored: list[str] = []
        self.endpoint = FakeEndpoint(script=self._script)
        self.url = self.endpoint.url

    @property
    def requests(self) -> list[dict[str, Any]]:
        return self.endpoint.requests

    @property
    def headers(self) -> list[dict[str, str]]:
        return self.endpoint.headers

    def close(self) -> None:
        self.endpoint.close()

    def __enter__(self) -> FakeServer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _script(self, request: dict[str, Any]) -> Step:
        try:
            self.check(request)
            for name in self.token_fields:
                if self.max_output is not None and request.get(name, 0) > self.max_output:
                    raise self.too_large(name, request[name])
        except Refused as refusal:
            self.refused.append(refusal.body)
            return Step(status=refusal.status, body=json.dumps(refusal.body).encode())
        self.answered.append(request)
        return self.answer(request)

    # -- what a family checks and how it answers (subclasses say what differs) -----------------------------------
    def check(self, request: dict[str, Any]) -> None:
        """Raises ``Refused`` for a request the family's documentation says it refuses."""

    def too_large(self, name: str, value: int) -> Refused:
        """What the family answers a token limit above the model's output limit."""
        raise NotImplementedError

    def schema(self, request: dict[str, Any]) -> dict[str, Any] | None:
        """The schema the model can see: in response_format where the family honours it, else in the prompt."""
        fmt = request.get("response_format") if self.honours_format else None
        if isinstance(fmt, dict) and fmt.get("type") == "json_schema":
            return fmt["json_schema"]["schema"]
        if isinstance(fmt, dict) and isinstance(fmt.get("schema"), dict):  # llama.cpp's json_object with a schema
            return fmt["schema"]
        return schema_in_prompt(request["messages"])

    def reply(self, request: dict[str, Any]) -> str:
        schema = self.schema(request)
        if schema is not None:
            return json.dumps(self.writer(schema).value(schema))
        fmt = request.get("response_format") if self.honours_format else None
        if isinstance(fmt, dict) and fmt.get("type") == "json_object":
            return json.dumps({"reply": SENTENCE})
        return SENTENCE + "."

    def answer(self, request: dict[str, Any]) -> Step:
        text, finish = self.reply(request), "stop"
        budget = next((request[f] for f in self.token_fields if request.get(f) is not None), None)
        spent = self.hidden_reasoning + (tokens(self.shown_reasoning) if self.shown_reasoning else 0)
        if budget is not None and tokens(text) + spent > budget:
            room = max(budget - spent, 0) * CHARS_PER_TOKEN
            text, finish = text[:room], "length"
        written = (tokens(text) if text else 0) + spent
        options = request.get("stream_options") or {}
        usage = (tokens(prompt_text(request["messages"])), written) if options.get("include_usage") else None
        return Step(text=text, finish_reason=finish, usage=usage, reasoning=self.shown_reasoning)

    def json_mode_needs_the_word(self, request: dict[str, Any]) -> bool:
        fmt = request.get("response_format")
        return (
            isinstance(fmt, dict)
            and fmt.get("type") == "json_object"
            and "json" not in prompt_text(request["messages"]).lower()
        )


# -- OpenAI and Azure: the strict subset -----------------------------------------------------------------------------

# Request fields of OpenAI's chat completions (OPENAI_CHAT); any other is "Unrecognized request argument supplied".
CHAT_FIELDS = frozenset(
    {
        "model",
        "messages",
        "audio",
        "frequency_penalty",
        "function_call",
        "functions",
        "logit_bias",
        "logprobs",
        "max_completion_tokens",
        "max_tokens",
        "metadata",
        "modalities",
        "n",
        "parallel_tool_calls",
        "prediction",
        "presence_penalty",
        "prompt_cache_key",
        "reasoning_effort",
        "response_format",
        "safety_identifier",
        "seed",
        "service_tier",
        "stop",
        "store",
        "stream",
        "stream_options",
        "temperature",
        "tool_choice",
        "tools",
        "top_logprobs",
        "top_p",
        "user",
        "verbosity",
        "web_search_options",
    }
)
# What every strict schema may hold (OPENAI_STRUCTURED: supported types, anyOf, definitions, recursion). Titles are
# annotations the OpenAI SDK's own pydantic helper leaves in the schemas it sends (openai/lib/_pydantic.py).
STRICT_STRUCTURE = frozenset(
    {
        "type",
        "properties",
        "required",
        "additionalProperties",
        "items",
        "enum",
        "const",
        "anyOf",
        "description",
        "title",
        "$defs",
        "definitions",
        "$ref",
    }
)
# OPENAI_STRUCTURED "Supported properties": string pattern/format, number bounds, array item counts. Nothing else
# (minLength, maxLength, default, allOf, not, if/then/else, ...): "If you turn on Structured Outputs by supplying
# strict: true and call the API with an unsupported JSON Schema, you will receive an error."
OPENAI_STRICT_KEYWORDS = frozenset(
    {
        "pattern",
        "format",
        "multipleOf",
        "maximum",
        "exclusiveMaximum",
        "minimum",
        "exclusiveMinimum",
        "minItems",
        "maxItems",
    }
)
OPENAI_FORMATS = frozenset({"date-time", "time", "date", "duration", "email", "hostname", "ipv4", "ipv6", "uuid"})
_NAME = re.compile(r"^[A-Za-z0-9_-]{1,64}$")  # json_schema.name (OPENAI_CHAT)


def strict_problem(
    schema: dict[str, Any],
    keywords: frozenset[str] = OPENAI_STRICT_KEYWORDS,
    max_depth: int = 5,
    max_properties: int = 5000,
    max_enum_values: int = 1000,
) -> str | None:
    """What a strict dialect refuses in ``schema``, worded as OpenAI words it (OPENAI_STRUCTURED): a root that is not
    an object or is an anyOf, an object not closed or with a property not required, a keyword outside the structural
    ones and ``keywords``, nesting deeper than ``max_depth`` objects, more than ``max_properties`` properties or
    ``max_enum_values`` enum values in all."""
    if schema.get("type") != "object" or "anyOf" in schema:
        return f"schema must be a JSON Schema of 'type: \"object\"', got 'type: \"{schema.get('type')}\"'."
    allowed = STRICT_STRUCTURE | keywords
    counts = {"properties": 0, "enum": 0}

    def walk(node: Any, where: tuple, depth: int) -> str | None:
        if not isinstance(node, dict):
            return None
        for key in node:
            if key not in allowed:
                return f"In context={where}, '{key}' is not permitted."
        if "format" in node and node["format"] not in OPENAI_FORMATS:
            return f"In context={where}, 'format' '{node['format']}' is not permitted."
        counts["enum"] += len(node.get("enum", []))
        if node.get("type") == "object" or "properties" in node:
            depth += 1
            if depth > max_depth:
                return f"In context={where}, the schema nests objects more than {max_depth} levels deep."
            properties = node.get("properties", {})
            counts["properties"] += len(properties)
            if node.get("additionalProperties") is not False:
                return f"In context={where}, 'additionalProperties' is required to be supplied and to be false."
            missing = [k for k in properties if k not in node.get("required", [])]
            if missing:
                return (
                    f"In context={where}, 'required' is required to be supplied and to be an array including "
                    f"every key in properties. Missing '{missing[0]}'."
                )
            for name, sub in properties.items():
                if found := walk(sub, (*where, "properties", name), depth):
                    return found
        if found := walk(node.get("items"), (*where, "items"), depth):
            return found
        for i, sub in enumerate(node.get("anyOf", [])):
            if found := walk(sub, (*where, "anyOf", str(i)), depth):
                return found
        for name, sub in (node.get("$defs") or node.get("definitions") or {}).items():
            if found := walk(sub, (*where, "$defs", name), 0):
                return found
        return None

    problem = walk(schema, (), 0)
    if problem is None and counts["properties"] > max_properties:
        problem = f"the schema has {counts['properties']} object properties, more than {max_properties}."
    if problem is None and counts["enum"] > max_enum_values:
        problem = f"the schema has {counts['enum']} enum values, more than {max_enum_values}."
    return problem


class OpenAIServer(FakeServer):
    """OpenAI's chat completions with Structured Outputs (OPENAI_STRUCTURED, OPENAI_CHAT)."""

    family, label, model = "openai", "OpenAI", "gpt-4.1-mini"
    docs = (OPENAI_STRUCTURED, OPENAI_CHAT, OPENAI_DEFAULT_REFUSED, OPENAI_MODEL_LIMITS[0], OPENAI_TOO_LARGE)
    max_output = 32_768
    strict_keywords = OPENAI_STRICT_KEYWORDS
    max_depth = 5  # "up to 5 levels of nesting"
    max_properties = 5000  # "up to 5000 object properties total"

    def check(self, request: dict[str, Any]) -> None:
        for name in request:
            if name not in CHAT_FIELDS:
                raise openai_error(f"Unrecognized request argument supplied: {name}")
        self.check_sampling(request)
        fmt = request.get("response_format")
        if isinstance(fmt, dict) and fmt.get("type") == "json_schema":
            spec = fmt.get("json_schema") or {}
            if not _NAME.match(str(spec.get("name", ""))):
                raise openai_error(
                    "Invalid 'response_format.json_schema.name': a-z, A-Z, 0-9, underscores and "
                    "dashes, at most 64 characters.",
                    "response_format.json_schema.name",
                )
            if spec.get("strict"):
                problem = self.strict_problem(spec.get("schema") or {})
                if problem:
                    raise openai_error(
                        f"Invalid schema for response_format '{spec['name']}': {problem}", "response_format"
                    )
        if self.json_mode_needs_the_word(request):
            # OPENAI_STRUCTURED, JSON mode: "the API will throw an error if the string "JSON" does not appear
            # somewhere in the context".
            raise openai_error(
                "'messages' must contain the word 'json' in some form, to use 'response_format' of type 'json_object'.",
                "messages",
            )

    def too_large(self, name: str, value: int) -> Refused:
        return openai_error(
            f"{name} is too large: {value}. This model supports at most {self.max_output} "
            f"completion tokens, whereas you provided {value}.",
            name,
            "invalid_value",
        )

    def check_sampling(self, request: dict[str, Any]) -> None:
        if "reasoning_effort" in request:  # a parameter of reasoning models only (OPENAI_CHAT)
            raise openai_error(
                "Unsupported parameter: 'reasoning_effort' is not supported with this model.",
                "reasoning_effort",
                "unsupported_parameter",
            )
        for name, low, high in (("temperature", 0, 2), ("top_p", 0, 1), ("presence_penalty", -2, 2)):
            value = request.get(name)
            if value is not None and not low <= value <= high:
                raise openai_error(
                    f"Invalid '{name}': expected a value between {low} and {high}, but got {value} instead.",
                    name,
                    "invalid_value",
                )

    def strict_problem(self, schema: dict[str, Any]) -> str | None:
        return strict_problem(schema, self.strict_keywords, self.max_depth, self.max_properties)


# The parameters OpenAI's reasoning models refuse (AZURE_REASONING: "The following are currently unsupported with
# reasoning models: temperature, top_p, presence_penalty, frequency_penalty, logprobs, top_logprobs, logit_bias,
# max_tokens"; OPENAI_CHAT: max_tokens "is not compatible with o-series models").
REASONING_REFUSED = ("top_p", "presence_penalty", "frequency_penalty", "logprobs", "top_logprobs", "logit_bias")


class OpenAIReasoningServer(OpenAIServer):
    """An OpenAI reasoning model (o3, o4-mini, gpt-5): max_completion_tokens only, temperature only its default,
    no top_p or penalties, reasoning_effort taken; its hidden reasoning shares max_completion_tokens
    (OPENAI_REASONING)."""

    label, model = "OpenAI reasoning model", "o4-mini"
    docs = (OPENAI_REASONING, AZURE_REASONING, OPENAI_CHAT, OPENAI_STRUCTURED, OPENAI_MODEL_LIMITS[1])
    token_fields = ("max_completion_tokens",)
    max_output = 100_000
    hidden_reasoning = 1500

    def check_sampling(self, request: dict[str, Any]) -> None:
        if "max_tokens" in request:
            raise openai_error(
                "Unsupported parameter: 'max_tokens' is not supported with this model. Use "
                "'max_completion_tokens' instead.",
                "max_tokens",
                "unsupported_parameter",
            )
        if request.get("temperature", 1) != 1:
            raise openai_error(
                f"Unsupported value: 'temperature' does not support {request['temperature']} with "
                "this model. Only the default (1) value is supported.",
                "temperature",
                "unsupported_value",
            )
        for name in REASONING_REFUSED:
            if name in request:
                raise openai_error(
                    f"Unsupported parameter: '{name}' is not supported with this model.", name, "unsupported_parameter"
                )
        effort = request.get("reasoning_effort")
        if effort is not None and effort not in ("minimal", "low", "medium", "high"):
            raise openai_error(
                f"Invalid value: '{effort}'. Supported values are: 'low', 'medium', and 'high'.",
                "reasoning_effort",
                "invalid_value",
            )


class AzureServer(OpenAIServer):
    """Azure OpenAI: OpenAI's strict subset without any type-specific keyword (AZURE_STRUCTURED "Unsupported
    type-specific keywords": minLength, maxLength, pattern, format, minimum, maximum, multipleOf, patternProperties,
    ..., minItems, maxItems, uniqueItems), at most 100 object properties and five levels of nesting."""

    family, label, model = "azure", "Azure OpenAI", "gpt-4.1-mini"
    docs = (AZURE_STRUCTURED, OPENAI_CHAT)
    strict_keywords = frozenset()
    max_properties = 100


# -- Gemini's OpenAI layer --------------------------------------------------------------------------------------------

# The chat fields Gemini's OpenAI layer maps (GEMINI_OPENAI); users report 400 "Unknown name" for the rest, seed,
# frequency_penalty, top_k and reasoning among them (GEMINI_UNKNOWN_FIELD).
GEMINI_FIELDS = frozenset(
    {
        "model",
        "messages",
        "max_tokens",
        "max_completion_tokens",
        "temperature",
        "top_p",
        "n",
        "stop",
        "stream",
        "stream_options",
        "response_format",
        "reasoning_effort",
        "tools",
        "tool_choice",
    }
)


class GeminiServer(FakeServer):
    """Google Gemini's OpenAI compatibility layer (GEMINI_OPENAI): an unknown field is refused with Google's own
    error shape, a JSON list (GEMINI_UNKNOWN_FIELD); response_format's schema is followed where Gemini supports the
    keyword and an unsupported one is ignored (GEMINI_SCHEMA_FIELDS); reasoning_effort maps to thinking."""

    family, label, model = "gemini", "Google Gemini (OpenAI layer)", "gemini-2.5-flash"
    docs = (GEMINI_OPENAI, GEMINI_UNKNOWN_FIELD, GEMINI_SCHEMA_FIELDS, GEMINI_MODEL_LIMITS, GEMINI_TOO_LARGE)
    max_output = 65_536

    def too_large(self, name: str, value: int) -> Refused:
        said = (
            f"Unable to submit request because it has a maxOutputTokens value of {value} but the supported range is "
            f"from 1 (inclusive) to {self.max_output + 1} (exclusive). Update the value and try again."
        )
        return Refused(400, [{"error": {"code": 400, "status": "INVALID_ARGUMENT", "message": said}}])

    def check(self, request: dict[str, Any]) -> None:
        unknown = [name for name in request if name not in GEMINI_FIELDS]
        if unknown:
            said = [f'Invalid JSON payload received. Unknown name "{name}": Cannot find field.' for name in unknown]
            raise Refused(
                400,
                [
                    {
                        "error": {
                            "code": 400,
                            "message": "\n".join(said),
                            "status": "INVALID_ARGUMENT",
                            "details": [
                                {
                                    "@type": "type.googleapis.com/google.rpc.BadRequest",
                                    "fieldViolations": [{"description": s} for s in said],
                                }
                            ],
                        }
                    }
                ],
            )
        effort = request.get("reasoning_effort")
        if effort is not None and effort not in ("none", "minimal", "low", "medium", "high"):
            raise Refused(
                400,
                [
                    {
                        "error": {
                            "code": 400,
                            "message": f"Invalid reasoning effort: {effort}",
                            "status": "INVALID_ARGUMENT",
                        }
                    }
                ],
            )


# -- Anthropic's OpenAI layer -----------------------------------------------------------------------------------------

# ANTHROPIC_OPENAI "Simple fields": accepted and ignored.
ANTHROPIC_IGNORED = (
    "response_format",
    "seed",
    "presence_penalty",
    "frequency_penalty",
    "reasoning_effort",
    "logprobs",
    "top_logprobs",
    "metadata",
    "prediction",
    "service_tier",
    "audio",
    "logit_bias",
    "store",
    "user",
    "modalities",
)


class AnthropicServer(FakeServer):
    """Anthropic's OpenAI SDK compatibility layer (ANTHROPIC_OPENAI): response_format, seed and the penalties are
    ignored, temperature is capped at 1, n must be 1. Its model sees only the prompt, so it writes JSON only when
    the prompt carries the schema."""

    family, label, model = "anthropic", "Anthropic (OpenAI layer)", "claude-sonnet-4-5"
    docs = (ANTHROPIC_OPENAI, ANTHROPIC_MODEL_LIMITS)
    honours_format = False
    max_output = 64_000

    def too_large(self, name: str, value: int) -> Refused:
        said = f"max_tokens: {value} > {self.max_output}, which is the maximum allowed number of output tokens for "
        said += self.model
        return Refused(400, {"type": "error", "error": {"type": "invalid_request_error", "message": said}})

    def check(self, request: dict[str, Any]) -> None:
        if request.get("n", 1) != 1:
            raise Refused(
                400, {"type": "error", "error": {"type": "invalid_request_error", "message": "n: must be exactly 1"}}
            )
        self.ignored += [name for name in ANTHROPIC_IGNORED if name in request]
        if request.get("temperature", 0) > 1:  # "Values greater than 1 are capped at 1."
            self.ignored.append(f"temperature {request['temperature']} (capped at 1)")


# -- DeepSeek: json_object only; deepseek-reasoner shows its chain of thought ------------------------------------------

REASONER_COT = "The question asks which hormone lowers glucose; insulin moves glucose into cells, so the answer is A."


class DeepSeekServer(FakeServer):
    """DeepSeek's API: response_format is text or json_object only (DEEPSEEK_CHAT), a json_schema one is refused
    as users report (DEEPSEEK_JSON_SCHEMA_REFUSED); JSON mode needs the word "json" in the prompt, without it "the
    model may generate an unending stream of whitespace until the generation reaches the token limit"
    (DEEPSEEK_JSON). deepseek-reasoner streams its chain of thought as reasoning_content, which counts in max_tokens
    (at most 64K); it ignores temperature, top_p and the penalties and refuses logprobs (DEEPSEEK_THINKING)."""

    family, label, model = "deepseek", "DeepSeek", "deepseek-chat"
    docs = (DEEPSEEK_JSON, DEEPSEEK_CHAT, DEEPSEEK_JSON_SCHEMA_REFUSED, DEEPSEEK_THINKING)
    token_fields = ("max_tokens",)

    def __init__(self, model: str | None = None, **kw: Any):
        super().__init__(model, **kw)
        if self.thinking:
            self.shown_reasoning = REASONER_COT
            self.max_output = 65_536  # "Default to 32K, maximum to 64K" (DEEPSEEK_THINKING)

    def too_large(self, name: str, value: int) -> Refused:
        return openai_error(
            f"Invalid max_tokens value, the valid range of max_tokens is [1, {self.max_output}]",
            name,
            "invalid_request_error",
        )

    @property
    def thinking(self) -> bool:
        return self.model == "deepseek-reasoner"

    def check(self, request: dict[str, Any]) -> None:
        fmt = request.get("response_format")
        if isinstance(fmt, dict) and fmt.get("type") not in ("text", "json_object"):
            raise openai_error("This response_format type is unavailable now", code="invalid_request_error")
        if self.thinking:
            for name in ("logprobs", "top_logprobs"):
                if name in request:
                    raise openai_error(f"{name} is not supported in thinking mode", name, "invalid_request_error")
            self.ignored += [
                n for n in ("temperature", "top_p", "presence_penalty", "frequency_penalty") if n in request
            ]

    def answer(self, request: dict[str, Any]) -> Step:
        if self.json_mode_needs_the_word(request):
            budget = request.get("max_tokens") or 4096
            return Step(
                text=" " * budget * CHARS_PER_TOKEN,
                pieces=8,
                finish_reason="length",
                usage=(tokens(prompt_text(request["messages"])), budget),
            )
        return super().answer(request)


# -- llama.cpp and vLLM: the schema becomes a grammar ------------------------------------------------------------------


class GrammarServer(FakeServer):
    """llama.cpp's server (LLAMACPP_SERVER) and vLLM (VLLM_STRUCTURED): response_format json_schema (or llama.cpp's
    json_object with a schema) is compiled into a grammar, so lengths, counts and enums bind; unsupported keywords
    are skipped silently (LLAMACPP_GRAMMARS). Every sampling field is taken. With a reasoning parser, vLLM streams
    the model's reasoning as reasoning_content (VLLM_REASONING)."""

    family, label, model = "llamacpp", "llama.cpp server", "qwen2.5-7b-instruct"
    docs = (LLAMACPP_SERVER, LLAMACPP_GRAMMARS, VLLM_STRUCTURED)

    def __init__(self, model: str | None = None, *, family: str = "llamacpp", reasoning: str = "", **kw: Any):
        super().__init__(model, **kw)
        self.family = family
        self.label = "vLLM" if family == "vllm" else self.label
        self.shown_reasoning = reasoning
        if reasoning:
            self.docs = (*self.docs, VLLM_REASONING)


# -- a server no profile knows, whose model writes lists short --------------------------------------------------------


class ShortListServer(FakeServer):
    """An OpenAI-compatible server of no known family (the generic profile: the strict form first), which takes
    response_format but does not constrain decoding by it, serving a model that writes one item where a list asks
    for three, a repair included. The chat fields are OpenAI's (OPENAI_CHAT)."""

    family, label, model = "generic", "Other OpenAI-compatible server (a model that writes lists short)", "local-7b"
    docs = (OPENAI_CHAT,)
    writer = ShortWriter


FAMILIES: dict[str, type[FakeServer]] = {
    "openai": OpenAIServer,
    "openai-reasoning": OpenAIReasoningServer,
    "azure": AzureServer,
    "gemini": GeminiServer,
    "anthropic": AnthropicServer,
    "deepseek": DeepSeekServer,
    "llamacpp": GrammarServer,
    "generic": ShortListServer,
}
