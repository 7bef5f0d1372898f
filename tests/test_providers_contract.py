"""Contract tests: every method, through the runner the command line uses, against a fake server per backend family
that holds each request to that family's documented rules (tests/providers/fakes.py; each family's pages are cited
below and in the fake), with the real client and real parsing. The whole matrix takes a few seconds."""

from __future__ import annotations

import json
import logging
import os
import subprocess
import sys

import pytest

from core.engine import paths
from core.engine.llm.ladder import MODE_NAMES, TEXT_MODE
from core.engine.llm.request import REASONING_ROOM
from core.engine.methods.cot import LENGTHS as COT_LENGTHS
from core.engine.store import RunStore
from core.studio.runfiles.exchange import export_to
from tests.providers import fakes
from tests.providers.fakes import (
    AnthropicServer,
    DeepSeekServer,
    GeminiServer,
    GrammarServer,
    OpenAIReasoningServer,
    OpenAIServer,
)
from tests.providers.matrix import API_KEY, METHODS, QUESTION, agent_messages, client, error_of, knobs, run

# The first rung each family's profile takes, and the page that says the family takes it.
FIRST_RUNG = {
    "openai": ("strict", fakes.OPENAI_STRUCTURED),
    "openai-reasoning": ("strict", fakes.OPENAI_REASONING),
    "azure": ("strict", fakes.AZURE_STRUCTURED),
    "gemini": ("json_schema", fakes.GEMINI_OPENAI),
    "anthropic": ("prompt", fakes.ANTHROPIC_OPENAI),  # response_format is ignored there
    "deepseek": ("json_object", fakes.DEEPSEEK_JSON),
    "llamacpp": ("grammar", fakes.LLAMACPP_SERVER),
    "generic": ("strict", fakes.OPENAI_CHAT),  # no family known: the strictest form, which it takes
}


@pytest.fixture(scope="module")
def servers():
    started = {name: family() for name, family in fakes.FAMILIES.items()}
    yield started
    for server in started.values():
        server.close()


def authorization(headers: dict[str, str]) -> str | None:
    return next((v for k, v in headers.items() if k.lower() == "authorization"), None)


def requests_during(server, action):
    """What ``action`` sent ``server``, and its result."""
    seen, refused, ignored = len(server.requests), len(server.refused), len(server.ignored)
    result = action()
    return result, server.requests[seen:], server.refused[refused:], server.ignored[ignored:]


# Cells the client gets wrong, each with the reason. Once the client is fixed the cell passes, which xfail(strict)
# reports as a failure: then it comes off this list.
KNOWN_FAILURES: dict[tuple[str, str], str] = {}
MATRIX = [
    pytest.param(
        family,
        method,
        id=f"{family}-{method}",
        marks=[pytest.mark.xfail(strict=True, reason=KNOWN_FAILURES[family, method])]
        if (family, method) in KNOWN_FAILURES
        else [],
    )
    for family in fakes.FAMILIES
    for method in METHODS
]


@pytest.mark.parametrize("family, method", MATRIX)
def test_every_method_ends_ok_on_every_family(servers, family, method):
    """Each family's server takes what the client sends it at once (nothing refused, nothing silently dropped), the
    run ends ok, and every agent message says which mode answered; a list written short is repaired once and then
    used as written. Rules: FIRST_RUNG's page for each family."""
    server = servers[family]
    result, sent, refused, ignored = requests_during(server, lambda: run(method, client(server)))
    assert result.status == "ok", error_of(result)
    assert refused == [] and ignored == []
    messages = agent_messages(result)
    assert messages and len(sent) == len(messages) + sum(bool(m.shortfalls) for m in messages)
    structured = MODE_NAMES[FIRST_RUNG[family][0]]
    assert {m.mode for m in messages} <= {structured, TEXT_MODE}
    assert sum(m.mode == structured for m in messages) >= 1
    assert all(m.data is not None for m in messages if m.mode == structured)


def test_a_refused_first_rung_steps_down_and_the_endpoint_remembers_it():
    """A server the client does not know (an unknown port: the generic profile) that takes json_object only:
    DeepSeek's "response_format is text or json_object" (https://api-docs.deepseek.com/api/create-chat-completion),
    refused with the message users report (https://github.com/llm-exe/llm-exe/issues/662)."""
    with DeepSeekServer() as server:
        llm = client(server, provider=None)
        assert llm.profile.name == "generic"
        first, sent, refused, _ = requests_during(server, lambda: run("cot", llm))
        assert first.status == "ok", error_of(first)
        formats = [r.get("response_format", {}).get("type") for r in sent]
        assert formats == ["json_schema", "json_schema", "json_object"]
        assert sent[0]["response_format"]["json_schema"]["strict"] is True
        assert "strict" not in sent[1]["response_format"]["json_schema"]
        assert len(refused) == 2
        [message] = agent_messages(first)
        assert message.mode == MODE_NAMES["json_object"]
        assert any(
            "refused strict json_schema" in note and "answered with json_object" in note for note in message.notes
        )
        # The next call goes straight to the rung that worked.
        second, sent, refused, _ = requests_during(server, lambda: run("medrag", llm))
        assert second.status == "ok", error_of(second)
        assert [r["response_format"]["type"] for r in sent] == ["json_object"] and refused == []
        assert all(m.mode == MODE_NAMES["json_object"] for m in agent_messages(second))


def test_an_unknown_openai_compatible_server_gets_the_safe_ladder():
    """An OpenAI-compatible server on a port no profile claims (here a llama.cpp server,
    https://github.com/ggml-org/llama.cpp/blob/master/tools/server/README.md) gets the strictest form first, which
    every server that takes a schema can read, and the run ends ok."""
    with GrammarServer() as server:
        llm = client(server, provider=None)
        assert (llm.profile.name, llm.profile.dialect) == ("generic", "strict")
        result, sent, refused, _ = requests_during(server, lambda: run("discuss", llm))
        assert result.status == "ok", error_of(result)
        assert refused == []
        schemas = [r["response_format"]["json_schema"] for r in sent if "response_format" in r]
        assert schemas and all(s["strict"] is True for s in schemas)
        # The strict form is one OpenAI's strict mode itself takes.
        assert [fakes.strict_problem(s["schema"]) for s in schemas] == [None] * len(schemas)
        assert {m.mode for m in agent_messages(result)} == {MODE_NAMES["strict"]}


def test_a_reasoning_model_whose_hidden_reasoning_eats_the_budget_is_asked_again_with_more_room():
    """OpenAI's reasoning models spend hidden reasoning tokens out of max_completion_tokens; when they use them all
    the reply is empty, finish_reason "length" (https://platform.openai.com/docs/guides/reasoning). That is retried
    with more room, not reported as a reply that did not parse."""
    with OpenAIReasoningServer(hidden_reasoning=REASONING_ROOM[None] + 4000) as server:
        result, sent, refused, _ = requests_during(server, lambda: run("cot", client(server)))
        assert result.status == "ok", error_of(result)
        budget = knobs("cot").get("max_tokens") or COT_LENGTHS["paper"].reader.tokens
        assert [r["max_completion_tokens"] for r in sent] == [
            budget + REASONING_ROOM[None],
            budget + 2 * REASONING_ROOM[None],
        ]
        assert sent[0]["messages"] == sent[1]["messages"]  # asked again as it was, not "repaired"
        assert refused == [] and not any({"max_tokens", "temperature", "top_p"} & set(r) for r in sent)
        [message] = agent_messages(result)
        assert message.data is not None and message.mode == MODE_NAMES["strict"]
        assert any("hidden reasoning used all" in note for note in message.notes)
        assert any("temperature 0 could not be set" in note for note in message.notes)  # the paper's greedy reader


def test_a_reasoning_model_is_sent_the_effort_asked_for_and_room_for_it():
    """reasoning_effort is an o-series parameter (https://platform.openai.com/docs/api-reference/chat/create)."""
    with OpenAIReasoningServer() as server:
        result, sent, _, _ = requests_during(server, lambda: run("cot", client(server, reasoning_effort="low")))
        assert result.status == "ok", error_of(result)
        [request] = sent
        assert request["reasoning_effort"] == "low"
        assert (
            request["max_completion_tokens"] == knobs("cot").get("max_tokens")
            or COT_LENGTHS["paper"].reader.tokens + REASONING_ROOM["low"]
        )


@pytest.mark.parametrize(
    "server",
    [
        # deepseek-reasoner streams its chain of thought as reasoning_content
        # (https://api-docs.deepseek.com/guides/thinking_mode).
        lambda: DeepSeekServer("deepseek-reasoner"),
        # vLLM with a reasoning parser does too (https://docs.vllm.ai/en/latest/features/reasoning_outputs.html).
        lambda: GrammarServer("qwen3-8b", family="vllm", reasoning=fakes.REASONER_COT),
    ],
    ids=["deepseek-reasoner", "vllm-reasoning-parser"],
)
def test_reasoning_content_is_shown_in_the_trace(server):
    with server() as server:
        result, sent, refused, ignored = requests_during(server, lambda: run("sema", client(server)))
        assert result.status == "ok", error_of(result)
        assert refused == [] and ignored == []  # deepseek-reasoner ignores sampling fields: none is sent
        messages = agent_messages(result)
        assert messages and all(m.reasoning == fakes.REASONER_COT for m in messages)
        assert all(fakes.REASONER_COT not in m.text for m in messages)  # the reasoning is not taken for the reply


def test_gemini_is_never_sent_a_seed_and_the_trace_says_the_sampled_calls_were_not_seeded():
    """Gemini's OpenAI layer refuses fields it does not know, seed among them
    (https://ai.google.dev/gemini-api/docs/openai; the error as users meet it:
    https://github.com/Vali-98/ChatterUI/issues/227). Discuss-RAG samples its discussion with a seed."""
    with GeminiServer() as server:
        result, sent, refused, _ = requests_during(server, lambda: run("discuss", client(server)))
        assert result.status == "ok", error_of(result)
        assert refused == [] and not any("seed" in r for r in sent)
        messages = agent_messages(result)
        sampled = [m for m in messages if m.role in ("recruiter", "expert", "summarizer", "decision-maker")]
        greedy = [m for m in messages if m.role in ("verifier", "reader")]
        assert sampled and greedy
        assert all(m.unseeded and any("not seeded" in note for note in m.notes) for m in sampled)
        assert not any(m.unseeded for m in greedy)


def test_anthropic_is_sent_nothing_it_would_drop_and_the_trace_says_what_could_not_be_set():
    """Anthropic's layer ignores seed and presence_penalty and caps temperature at 1
    (https://docs.anthropic.com/en/api/openai-sdk): MedRGAG's generator asks for temperature 1.2, top-p 0.9, presence
    penalty 1.0 and a seed; the trace says which of them could not be had, instead of the server dropping them."""
    with AnthropicServer() as server:
        result, sent, refused, ignored = requests_during(server, lambda: run("medrgag", client(server)))
        assert result.status == "ok", error_of(result)
        assert refused == [] and ignored == []
        assert not any({"seed", "presence_penalty", "response_format"} & set(r) for r in sent)
        assert all(r.get("temperature", 0) <= 1 for r in sent)
        generators = [m for m in agent_messages(result) if m.role == "generator"]
        assert generators and all(m.unseeded for m in generators)
        for said in ("temperature 1.2 lowered to 1", "presence_penalty 1 could not be set", "not seeded"):
            assert all(any(said in note for note in m.notes) for m in generators), said


def test_a_field_refused_in_geminis_error_shape_is_left_out_and_said():
    """Behind a gateway whose URL names no provider the client sends Gemini every sampling field; Gemini's layer
    refuses the unknown ones by name, in a JSON list (https://github.com/Vali-98/ChatterUI/issues/227), and a refusal
    that names a field the call can do without is answered by sending it again without that field."""
    with GeminiServer() as server:
        result, sent, refused, _ = requests_during(server, lambda: run("discuss", client(server, provider="generic")))
        assert refused and 'Unknown name \\"seed\\"' in json.dumps(refused[0])
        assert result.status == "ok", error_of(result)
        assert "seed" not in sent[-1]


def test_a_token_limit_refused_for_its_size_is_learned_not_swapped_for_the_other_field():
    """OpenAI refuses a token limit above the model's output limit naming the field, for its value: "max_tokens is
    too large: 20480. This model supports at most 16384 completion tokens"
    (https://github.com/tailcallhq/forgecode/issues/1185; each model's limit:
    https://platform.openai.com/docs/models/gpt-4.1-mini). The field is known, so the client keeps it, asks again
    within the limit the server named, and the trace says so."""
    with OpenAIServer(max_output=100) as server:
        result, sent, refused, _ = requests_during(server, lambda: run("cot", client(server)))
        assert refused and "at most 100 completion tokens" in json.dumps(refused[0])
        assert all("max_completion_tokens" in r and "max_tokens" not in r for r in sent)
        assert result.status == "ok", error_of(result)
        assert sent[-1]["max_completion_tokens"] <= 100
        notes = [n for m in agent_messages(result) for n in m.notes]
        assert any("takes at most 100 output tokens" in n for n in notes), notes


def test_no_key_reaches_the_database_a_log_or_an_exported_run_file(caplog, tmp_path):
    """The key goes to the server (the Authorization header) and nowhere else, refusals and notes included."""
    caplog.set_level(logging.DEBUG)
    store = RunStore()
    ids = []
    with OpenAIServer() as openai_server, DeepSeekServer() as unknown:
        for server, provider, method in ((openai_server, "", "discuss"), (unknown, None, "medrgag")):
            result = run(method, client(server, provider=provider), store=store)
            assert result.status == "ok", error_of(result)
            ids.append(result.id)
            assert all(authorization(h) == f"Bearer {API_KEY}" for h in server.headers)
        assert unknown.refused  # a refusal's text went into the trace too
    exported = export_to(store, ids, tmp_path / "runs.json")
    assert exported.runs
    stored = b"".join(p.read_bytes() for p in paths.home().rglob("*") if p.is_file())
    assert stored and API_KEY.encode() not in stored
    assert API_KEY.encode() not in (tmp_path / "runs.json").read_bytes()
    logged = caplog.text + "".join(f"{r.getMessage()} {r.args!r}" for r in caplog.records)
    assert caplog.records and API_KEY not in logged


def test_the_command_line_asks_an_openai_endpoint(tmp_path):
    """``python -m core ask`` with MEDRAG_BASE_URL, MEDRAG_MODEL, MEDRAG_PROVIDER and a key from the environment:
    OpenAI's strict structured outputs (https://platform.openai.com/docs/guides/structured-outputs)."""
    with OpenAIServer() as server:
        env = {
            **os.environ,
            "MEDRAG_BASE_URL": server.url,
            "MEDRAG_MODEL": server.model,
            "MEDRAG_PROVIDER": "openai",
            "MEDRAG_API_KEY": API_KEY,
            "MEDRAG_STUDIO_HOME": str(tmp_path / "home"),
            "MEDRAG_MAX_RETRIES": "0",
        }
        options = [arg for letter, text in QUESTION.options.items() for arg in ("--option", f"{letter}={text}")]
        proc = subprocess.run(
            [sys.executable, "-m", "core", "ask", QUESTION.text, *options, "--json"],
            capture_output=True,
            text=True,
            timeout=120,
            env=env,
            cwd=paths.REPO_ROOT,
        )
        assert proc.returncode == 0, proc.stderr[-2000:] + proc.stdout[-2000:]
        assert server.refused == [] and len(server.requests) == 1
        assert authorization(server.headers[0]) == f"Bearer {API_KEY}"
    printed = proc.stdout[proc.stdout.index("\n{") + 1 :]
    saved = json.loads(printed)
    assert saved["status"] == "ok" and saved["answer"]["choice"] in QUESTION.options
    modes = [e["payload"]["mode"] for e in saved["events"] if e["payload"]["kind"] == "agent_message"]
    assert modes == [MODE_NAMES["strict"]]
    assert API_KEY not in proc.stdout + proc.stderr
    stored = b"".join(p.read_bytes() for p in (tmp_path / "home").rglob("*") if p.is_file())
    assert stored and API_KEY.encode() not in stored
