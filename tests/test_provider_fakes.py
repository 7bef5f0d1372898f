"""The fake servers hold requests to what their families' documentation says (each test cites the page): checked here
with raw HTTP, without the client, so that the contract tests' "ok" means the client met the rules, not that a fake
let everything through."""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from typing import Any

import pytest

from tests.providers import fakes
from tests.providers.fakes import (
    AnthropicServer,
    AzureServer,
    DeepSeekServer,
    GeminiServer,
    GrammarServer,
    OpenAIReasoningServer,
    OpenAIServer,
    Writer,
)

STRICT = {
    "type": "object",
    "properties": {
        "answer": {"type": "string", "enum": ["A", "B"]},
        "why": {"type": "string", "description": "(at most 30 characters)"},
        "ids": {"type": "array", "items": {"type": "string"}, "minItems": 1, "maxItems": 3},
    },
    "required": ["answer", "why", "ids"],
    "additionalProperties": False,
}
ASK = [{"role": "user", "content": "Which hormone lowers blood glucose?"}]


def post(server: fakes.FakeServer, **body: Any) -> tuple[int, Any]:
    """The status and, for a stream, what it carried (content, reasoning, finish_reason, usage); else the body."""
    request = urllib.request.Request(
        f"{server.url}/chat/completions",
        method="POST",
        data=json.dumps({"model": server.model, "messages": ASK, "stream": True, **body}).encode(),
        headers={"Content-Type": "application/json"},
    )
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            text = response.read().decode()
    except urllib.error.HTTPError as exc:
        return exc.code, json.loads(exc.read())
    said = {"content": "", "reasoning": "", "finish_reason": None, "usage": None}
    for line in text.splitlines():
        if not line.startswith("data: {"):
            continue
        chunk = json.loads(line[6:])
        said["usage"] = chunk.get("usage") or said["usage"]
        for choice in chunk["choices"]:
            said["content"] += choice["delta"].get("content", "")
            said["reasoning"] += choice["delta"].get("reasoning_content", "")
            said["finish_reason"] = choice["finish_reason"] or said["finish_reason"]
    return 200, said


def json_schema(schema: dict[str, Any], strict: bool = True) -> dict[str, Any]:
    return {"type": "json_schema", "json_schema": {"name": "Reply", "schema": schema, "strict": strict}}


@pytest.fixture
def openai_server():
    with OpenAIServer() as server:
        yield server


def with_property(**extra: Any) -> dict[str, Any]:
    return {**STRICT, "properties": {**STRICT["properties"], "why": {**STRICT["properties"]["why"], **extra}}}


@pytest.mark.parametrize(
    "schema, refused",
    [
        (
            {"anyOf": [STRICT, STRICT]},
            "must be a JSON Schema of 'type: \"object\"'",
        ),  # "Root objects must not be anyOf"
        ({**STRICT, "additionalProperties": True}, "'additionalProperties' is required to be supplied and to be false"),
        ({**STRICT, "required": ["answer", "ids"]}, "Missing 'why'"),  # "All fields must be required"
        (with_property(maxLength=30), "'maxLength' is not permitted"),  # not among the supported string properties
        (with_property(default="none"), "'default' is not permitted"),  # instructor#1074
        (with_property(allOf=[{"type": "string"}]), "'allOf' is not permitted"),  # "Composition: allOf ..."
        (with_property(format="uri"), "'format' 'uri' is not permitted"),  # formats: date-time ... uuid only
    ],
)
def test_openai_strict_mode_refuses_what_its_supported_subset_leaves_out(openai_server, schema, refused):
    """https://platform.openai.com/docs/guides/structured-outputs#supported-schemas"""
    assert post(openai_server, response_format=json_schema(STRICT))[0] == 200
    status, body = post(openai_server, response_format=json_schema(schema))
    assert status == 400 and refused in body["error"]["message"] and body["error"]["param"] == "response_format"
    assert post(openai_server, response_format=json_schema(schema, strict=False))[0] == 200  # not strict: taken


def test_openai_refuses_an_unknown_field_and_json_mode_without_the_word(openai_server):
    """https://platform.openai.com/docs/api-reference/chat/create; JSON mode: "the API will throw an error if the
    string "JSON" does not appear somewhere in the context"
    (https://platform.openai.com/docs/guides/structured-outputs#json-mode)."""
    status, body = post(openai_server, top_k=40)
    assert status == 400 and "Unrecognized request argument supplied: top_k" in body["error"]["message"]
    status, body = post(openai_server, response_format={"type": "json_object"})
    assert status == 400 and "must contain the word 'json'" in body["error"]["message"]
    assert (
        post(
            openai_server,
            response_format={"type": "json_object"},
            messages=[{"role": "user", "content": "Answer in JSON."}],
        )[0]
        == 200
    )


def test_azure_refuses_every_type_specific_keyword_and_large_schemas():
    """Azure's strict subset
    (https://learn.microsoft.com/azure/ai-foundry/openai/how-to/structured-outputs#json-schema-support-and-limitations):
    minItems/maxItems are "Unsupported type-specific keywords" (OpenAI takes them); "up to 100 object properties"."""
    with AzureServer() as azure, OpenAIServer() as openai:
        assert post(openai, response_format=json_schema(STRICT))[0] == 200
        status, body = post(azure, response_format=json_schema(STRICT))
        assert status == 400 and "'minItems' is not permitted" in body["error"]["message"]
        wide = {
            "type": "object",
            "properties": {f"p{i}": {"type": "string"} for i in range(101)},
            "required": [f"p{i}" for i in range(101)],
            "additionalProperties": False,
        }
        assert post(azure, response_format=json_schema(wide))[0] == 400
        assert post(openai, response_format=json_schema(wide))[0] == 200


def test_a_reasoning_model_refuses_max_tokens_and_sampling_and_spends_hidden_tokens():
    """max_tokens "is not compatible with o-series models" (https://platform.openai.com/docs/api-reference/chat/create);
    "unsupported with reasoning models: temperature, top_p, presence_penalty, ..., max_tokens"
    (https://learn.microsoft.com/azure/ai-foundry/openai/how-to/reasoning#not-supported)."""
    with OpenAIReasoningServer(hidden_reasoning=1000) as server:
        status, body = post(server, max_tokens=100)
        assert status == 400 and "Use 'max_completion_tokens' instead" in body["error"]["message"]
        assert body["error"]["param"] == "max_tokens"
        status, body = post(server, temperature=0.2, max_completion_tokens=5000)
        assert status == 400 and "Only the default (1) value is supported" in body["error"]["message"]
        for field, value in (("top_p", 0.9), ("presence_penalty", 1.0)):
            status, body = post(server, **{field: value})
            assert status == 400 and body["error"]["param"] == field
        status, said = post(server, temperature=1, max_completion_tokens=5000, reasoning_effort="low")
        assert status == 200 and said["content"] and said["finish_reason"] == "stop"
        status, said = post(server, max_completion_tokens=900)  # reasoning used the whole budget
        assert status == 200 and said["content"] == "" and said["finish_reason"] == "length"


def test_geminis_layer_refuses_unknown_fields_in_its_own_error_shape():
    """https://ai.google.dev/gemini-api/docs/openai; the error users meet:
    https://github.com/Vali-98/ChatterUI/issues/227;
    an unsupported schema field is ignored (https://firebase.google.com/docs/ai-logic/generate-structured-output)."""
    with GeminiServer() as server:
        status, body = post(server, seed=7)
        assert status == 400 and isinstance(body, list)
        assert body[0]["error"]["status"] == "INVALID_ARGUMENT"
        assert 'Unknown name "seed": Cannot find field.' in body[0]["error"]["message"]
        status, said = post(
            server,
            response_format=json_schema(
                {
                    **STRICT,
                    "properties": {**STRICT["properties"], "why": {"type": "string", "maxLength": 30, "title": "Why"}},
                },
                strict=False,
            ),
        )
        assert status == 200 and set(json.loads(said["content"])) == {"answer", "why", "ids"}


def test_anthropics_layer_ignores_response_format_and_seed_and_caps_temperature():
    """https://docs.anthropic.com/en/api/openai-sdk: response_format, seed, presence_penalty "Ignored"; temperature
    "Values greater than 1 are capped at 1"; n "Must be exactly 1"."""
    with AnthropicServer() as server:
        status, said = post(server, response_format=json_schema(STRICT), seed=3, temperature=1.5)
        assert status == 200 and said["content"] == fakes.SENTENCE + "."  # the schema it was not shown is not followed
        assert server.ignored == ["response_format", "seed", "temperature 1.5 (capped at 1)"]
        asked = [{"role": "user", "content": f"Reply in JSON that follows this JSON schema:\n{json.dumps(STRICT)}"}]
        status, said = post(server, messages=asked)
        assert status == 200 and json.loads(said["content"])["answer"] == "A"
        assert post(server, n=2)[0] == 400


def test_deepseek_takes_json_object_only_and_needs_the_word_json():
    """response_format "Must be one of text or json_object" (https://api-docs.deepseek.com/api/create-chat-completion),
    refused as users report (https://github.com/llm-exe/llm-exe/issues/662); without "json" in the prompt "the model
    may generate an unending stream of whitespace" (https://api-docs.deepseek.com/guides/json_mode)."""
    with DeepSeekServer() as server:
        status, body = post(server, response_format=json_schema(STRICT))
        assert status == 400 and body["error"]["message"] == "This response_format type is unavailable now"
        status, said = post(server, response_format={"type": "json_object"}, max_tokens=50)
        assert status == 200 and said["content"].strip() == "" and said["finish_reason"] == "length"


def test_deepseek_reasoner_streams_its_chain_of_thought_within_max_tokens():
    """max_tokens "The maximum output length (including the COT part) ... maximum to 64K"; reasoning_content
    (https://api-docs.deepseek.com/guides/thinking_mode)."""
    with DeepSeekServer("deepseek-reasoner") as server:
        status, said = post(server, max_tokens=4000, stream_options={"include_usage": True})
        assert status == 200 and said["reasoning"] == fakes.REASONER_COT and said["content"]
        assert said["usage"]["completion_tokens"] > fakes.tokens(said["content"])  # the chain of thought counts
        assert post(server, max_tokens=70000)[0] == 400
        assert post(server, logprobs=True)[0] == 400
        assert post(server, temperature=0.0)[0] == 200 and server.ignored == ["temperature"]


def test_a_grammar_server_holds_the_reply_to_the_schemas_bounds_and_references():
    """llama.cpp compiles the schema into a grammar, $defs and bounds included
    (https://github.com/ggml-org/llama.cpp/blob/master/grammars/README.md)."""
    schema = {
        "type": "object",
        "$defs": {
            "Item": {
                "type": "object",
                "properties": {"id": {"enum": ["d1", "d2", "d3"]}, "text": {"type": "string", "maxLength": 12}},
            }
        },
        "properties": {"items": {"type": "array", "items": {"$ref": "#/$defs/Item"}, "minItems": 3, "maxItems": 3}},
    }
    with GrammarServer() as server:
        status, said = post(server, response_format=json_schema(schema), stream_options={"include_usage": True})
        assert status == 200 and said["usage"]["completion_tokens"] > 0
        items = json.loads(said["content"])["items"]
        assert [i["id"] for i in items] == ["d1", "d2", "d3"] and all(len(i["text"]) <= 12 for i in items)
        assert post(server)[1]["usage"] is None  # usage streams only when asked for


def test_the_model_reads_bounds_a_strict_dialect_could_only_say_in_a_description():
    schema = {
        "type": "object",
        "properties": {
            "experts": {
                "type": "array",
                "description": "(at least 3 items; at most 3 items)",
                "items": {"type": "string", "description": "(at most 9 characters)"},
            },
            "note": {"anyOf": [{"type": "string"}, {"type": "null"}]},
        },
    }
    reply = Writer(schema).value(schema)
    assert len(reply["experts"]) == 3 and all(len(e) <= 9 for e in reply["experts"]) and reply["note"]
