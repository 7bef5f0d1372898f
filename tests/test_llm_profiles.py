"""Backend profiles, the strict schema form, the ladder's refusal reading and what a call sends on each profile."""

from __future__ import annotations

import pytest

from core.engine.llm import profiles
from core.engine.llm.ladder import Learned, refused_field, refused_format, rungs_from
from core.engine.llm.parsing import ReplyParseError, parse_reply
from core.engine.llm.request import Asked, build
from core.engine.llm.schemas import shortfalls, strict_form
from core.engine.methods.discuss import Review
from core.engine.methods.sema import judgment_schema

ASK = [{"role": "system", "content": "s"}, {"role": "user", "content": "u"}]


@pytest.mark.parametrize(
    ("url", "family"),
    [
        (None, "embedded"),
        ("https://api.openai.com/v1", "openai"),
        ("https://res.openai.azure.com/openai/v1", "azure"),
        ("https://api.anthropic.com/v1/", "anthropic"),
        ("https://generativelanguage.googleapis.com/v1beta/openai", "gemini"),
        ("https://api.groq.com/openai/v1", "groq"),
        ("https://api.deepseek.com", "deepseek"),
        ("https://openrouter.ai/api/v1", "openrouter"),
        ("http://127.0.0.1:11434/v1", "ollama"),
        ("http://localhost:1234/v1", "lmstudio"),
        ("http://127.0.0.1:8080/v1", "llamacpp"),
        ("http://gpu.hospital.example:9000/v1", "generic"),
        ("https://api.openai.com.evil.example/v1", "generic"),
    ],
)
def test_the_family_is_detected_from_the_base_url(url, family):
    assert profiles.detect(url).name == family


def test_reasoning_models_are_a_variant_of_their_family():
    o3 = profiles.resolve("https://api.openai.com/v1", "o3-mini")
    assert o3.reasoning and o3.sampling == frozenset({"seed"}) and o3.token_field == "max_completion_tokens"
    assert not profiles.resolve("https://api.openai.com/v1", "gpt-4o").reasoning
    r1 = profiles.resolve("https://api.deepseek.com", "deepseek-reasoner")
    assert r1.reasoning and r1.dialect == "prompt" and not r1.sampling
    assert profiles.resolve("http://x:1/v1", "gpt-4o", provider="openai").name == "openai"  # named, not detected


def closed_and_required(node) -> bool:
    if isinstance(node, dict):
        if "properties" in node and (
            node.get("additionalProperties") is not False or set(node["required"]) != set(node["properties"])
        ):
            return False
        return all(closed_and_required(v) for v in node.values())
    if isinstance(node, list):
        return all(closed_and_required(v) for v in node)
    return True


def keywords(node) -> set[str]:
    if isinstance(node, dict):
        return set(node) | set().union(
            *(keywords(v) for k, v in node.items() if k != "properties"),
            *(keywords(v) for v in node.get("properties", {}).values()),
        )
    if isinstance(node, list):
        return set().union(*(keywords(v) for v in node)) if node else set()
    return set()


@pytest.mark.parametrize("schema", [Review, judgment_schema(3)])
def test_a_strict_form_is_a_closed_root_object_with_bounds_in_the_descriptions(schema):
    form = strict_form(schema)
    assert form.wrapped and form.schema["type"] == "object" and "anyOf" not in form.schema  # two shapes, wrapped
    assert closed_and_required(form.schema)
    assert not keywords(form.schema) & {"maxLength", "minItems", "maxItems", "default", "title", "const", "$ref"}
    assert "(at most 120 characters)" in str(form.schema) or "(at most 500 characters)" in str(form.schema)
    kept = strict_form(judgment_schema(3), profiles.OPENAI_KEYWORDS).schema  # OpenAI takes item counts
    assert "maxItems" in keywords(kept) and "maxLength" not in keywords(kept)


def test_a_strict_reply_is_brought_back_to_the_methods_own_model():
    reply = '{"reply": {"gaps": ["' + "g" * 300 + '"], "sufficient": false, "follow_up_queries": ["a", "b", "c", "d"]}}'
    judged = parse_reply(reply, judgment_schema(3))
    assert len(judged.gaps[0]) == 120 and judged.follow_up_queries == ["a", "b", "c"]  # cut to the bounds
    short = parse_reply('{"gaps": [], "sufficient": false, "follow_up_queries": ["a"]}', judgment_schema(3))
    assert short.follow_up_queries == ["a"]  # fewer than asked: used as written, and said
    assert [s.text for s in shortfalls(short)] == ["asked for 3 follow-up queries, the model wrote 1"]
    with pytest.raises(ReplyParseError, match="at least 1 item"):  # none at all cannot be used: repaired
        parse_reply('{"gaps": [], "sufficient": false, "follow_up_queries": []}', judgment_schema(3))


@pytest.mark.parametrize(
    ("status", "message", "param", "refused"),
    [
        (400, "Unsupported parameter: 'max_tokens' is not supported with this model.", None, "max_tokens"),
        (400, 'Invalid JSON payload received. Unknown name "seed": Cannot find field.', None, "seed"),
        (400, "Unrecognized request argument supplied: max_completion_tokens", None, "max_completion_tokens"),
        (
            400,
            "[{'type': 'extra_forbidden', 'loc': ('body', 'top_p'), 'msg': 'Extra inputs are not permitted'}]",
            None,
            "top_p",
        ),
        (400, "whatever", "presence_penalty", "presence_penalty"),
        (500, "Unsupported parameter: 'seed'", None, None),  # not a refusal
        (400, "Invalid schema for response_format 'Pick'", None, None),  # a format, not a field
    ],
)
def test_a_refused_field_is_read_from_the_servers_own_words(status, message, param, refused):
    fields = frozenset({"seed", "top_p", "presence_penalty", "max_tokens", "max_completion_tokens"})
    assert refused_field(status, message, param, fields) == refused


def test_format_refusals_step_down_from_where_the_endpoint_last_answered():
    assert refused_format(400, "Invalid schema for response_format 'Pick': 'maxLength' is not permitted")
    assert not refused_format(401, "invalid schema")
    assert rungs_from("strict", None) == ("strict", "json_schema", "json_object", "prompt")
    assert rungs_from("strict", "json_object") == ("json_object", "prompt")
    assert rungs_from("grammar", "strict") == ("grammar", "json_object", "prompt")  # a rung not on this ladder


def test_what_each_profile_sends():
    from pydantic import BaseModel

    class Pick(BaseModel):
        answer: str

    asked = Asked(temperature=0.7, max_tokens=100, seed=5, top_p=0.9)
    embedded = build(profiles.PROFILES["embedded"], "m", asked, ASK, Pick, "grammar", Learned())
    assert (
        embedded.params
        == {
            "temperature": 0.7,
            "top_p": 0.9,
            "seed": 5,
            "max_tokens": 100,
            "response_format": embedded.params["response_format"],
        }
        and not embedded.notes
    )
    o3 = build(
        profiles.resolve("https://api.openai.com/v1", "o3"), "o3", asked, ASK, Pick, "strict", Learned(), effort="high"
    )
    assert o3.params["max_completion_tokens"] == 100 + 32_000 and o3.params["reasoning_effort"] == "high"
    assert "temperature" not in o3.params and "top_p" not in o3.params and o3.params["seed"] == 5
    assert any(n.startswith("temperature 0.7 could not be set") for n in o3.notes)
    gemini = build(profiles.PROFILES["gemini"], "gemini-2.0-flash", asked, ASK, Pick, "json_schema", Learned())
    assert "seed" not in gemini.params and gemini.unseeded and gemini.key_params["seed"] == 5  # seeds kept apart
    claude = build(profiles.PROFILES["anthropic"], "claude", Asked(temperature=1.2), ASK, Pick, "prompt", Learned())
    assert claude.params["temperature"] == 1.0 and "response_format" not in claude.params
    assert "JSON schema" in claude.messages[-1]["content"] and claude.messages[:-1] == ASK[:-1]
    deepseek = build(profiles.PROFILES["deepseek"], "deepseek-chat", Asked(), ASK, Pick, "json_object", Learned())
    assert deepseek.params["response_format"] == {"type": "json_object"} and "JSON" in deepseek.messages[-1]["content"]
    learned = build(profiles.GENERIC, "m", asked, ASK, None, None, Learned(dropped={"seed"}, token_field="x_tokens"))
    assert "seed" not in learned.params and learned.params["x_tokens"] == 100
