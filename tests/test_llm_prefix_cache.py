"""The shipped embedded server on the real model: it answers, and an agent whose prompt starts like an earlier
agent's reads that shared prefix from the prompt cache (llama.cpp's own counters say how many prompt tokens it
evaluated), also when two such agents run at once in different slots."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import pytest

from core.llm import LLM, embedded
from core.methods.base import messages

pytestmark = pytest.mark.model

SYSTEM = "You are one agent in a team that answers medical questions from documents. Be brief."
DOCUMENTS = "Documents:\n" + "\n".join(
    f"[doc-{i}] Finding {i}: in condition {i}, the first-line drug is drug {i} and the key test is test {i}."
    for i in range(12)) + "\n\nQuestion:\nWhich drug is first line in condition 3?"
ROLES = ("Summarizer", "Extractor", "Reasoner", "Verifier")


def ask(llm: LLM, role: str):
    return llm.complete(messages(SYSTEM, DOCUMENTS, f"You are the {role}. Reply with one short sentence."),
                        max_tokens=8)


def evaluated(server: embedded.EmbeddedServer, call) -> tuple[int, list]:
    """Prompt tokens the server evaluated while ``call`` ran, and what it returned."""
    before = server.metrics()["prompt_tokens_total"]
    result = call()
    return int(server.metrics()["prompt_tokens_total"] - before), result


def test_agents_sharing_a_prefix_read_it_once_across_slots():
    llm = LLM(cache_mode="off")
    llm.complete([{"role": "user", "content": "Say OK."}], max_tokens=2)  # starts the shared server
    server = embedded.EmbeddedServer.current()
    assert server.config == embedded.SHIPPED

    first_cost, first = evaluated(server, lambda: ask(llm, ROLES[0]))
    assert first.text.strip() and first.usage.prompt_tokens > 250
    assert first_cost > first.usage.prompt_tokens / 2, "the first agent found its prompt already read"
    second_cost, second = evaluated(server, lambda: ask(llm, ROLES[1]))
    assert second_cost < second.usage.prompt_tokens / 4, "the second agent read the shared prefix again"

    with ThreadPoolExecutor(2) as pool:  # two agents at once: each finds the prefix, in a slot or the host cache
        both_cost, both = evaluated(server, lambda: list(pool.map(lambda r: ask(llm, r), ROLES[2:])))
    assert all(r.text.strip() for r in both)
    assert both_cost < sum(r.usage.prompt_tokens for r in both) / 4, "a concurrent agent read the prefix again"
