"""The shipped embedded server on the real model: it answers, and an agent whose prompt starts like an earlier
agent's reads that shared prefix from the prompt cache (llama.cpp's own counters say how many prompt tokens it
evaluated); agents a method starts together (``RunContext.parallel``) read a prefix no slot has seen once, in one
slot, and the others get a copy of it."""

from __future__ import annotations

import pytest

from core.engine.llm import LLM, embedded
from core.engine.methods.contract import RunContext
from core.engine.methods.templates import messages
from core.engine.trace import Run

pytestmark = pytest.mark.model

SYSTEM = "You are one agent in a team that answers medical questions from documents. Be brief."
DOCUMENTS = (
    "Documents:\n"
    + "\n".join(
        f"[doc-{i}] Finding {i}: in condition {i}, the first-line drug is drug {i} and the key test is test {i}."
        for i in range(12)
    )
    + "\n\nQuestion:\nWhich drug is first line in condition 3?"
)
ROLES = ("Summarizer", "Extractor", "Reasoner", "Verifier")


def ask(llm: LLM, role: str):
    return llm.complete(
        messages(SYSTEM, DOCUMENTS, f"You are the {role}. Reply with one short sentence."), max_tokens=8
    )


def evaluated(server: embedded.EmbeddedServer, call) -> tuple[int, list]:
    """Prompt tokens the server evaluated while ``call`` ran, and what it returned."""
    before = server.metrics()["prompt_tokens_total"]
    result = call()
    return int(server.metrics()["prompt_tokens_total"] - before), result


def test_agents_in_turn_read_a_shared_prefix_once():
    llm = LLM(cache_mode="off")
    llm.complete([{"role": "user", "content": "Say OK."}], max_tokens=2)  # starts the shared server
    server = embedded.EmbeddedServer.current()
    assert server.config == embedded.SHIPPED

    first_cost, first = evaluated(server, lambda: ask(llm, ROLES[0]))
    assert first.text.strip() and first.usage.prompt_tokens > 250
    assert first_cost > first.usage.prompt_tokens / 2, "the first agent found its prompt already read"
    second_cost, second = evaluated(server, lambda: ask(llm, ROLES[1]))
    assert second_cost < second.usage.prompt_tokens / 4, "the second agent read the shared prefix again"

    third_cost, third = evaluated(server, lambda: ask(llm, ROLES[2]))  # and the next, in whichever slot
    assert third_cost < third.usage.prompt_tokens / 4, "the third agent read the shared prefix again"


def test_agents_started_together_read_a_new_shared_prefix_once():
    llm = LLM(cache_mode="off")
    llm.complete([{"role": "user", "content": "Say OK."}], max_tokens=2)
    server = embedded.EmbeddedServer.current()
    assert server.config.copies_prefixes and server.config.slots >= 3
    documents = (
        "Documents:\n"
        + "\n".join(  # a prefix no earlier test has read
            f"[trial-{i}] Trial {i} compared drug {i} with placebo in {100 + i} patients and found fewer events."
            for i in range(14)
        )
        + "\n\nQuestion:\nWhich trial enrolled 105 patients?"
    )
    ctx = RunContext(Run(method="mass", question="q"), llm)

    def agent(role: str):
        return ctx.ask(
            messages(SYSTEM, documents, f"You are the {role}. Reply with one short sentence."),
            stage="views",
            agent=role,
            role=role,
            max_tokens=8,
        )

    before = server.metrics()
    replies = ctx.parallel(agent, ROLES[:3])
    after = server.metrics()
    prefix = replies[0].usage.prompt_tokens - 20  # the role's instruction and the chat markers are the rest
    evaluated = after["prompt_tokens_total"] - before["prompt_tokens_total"]
    assert all(r.text.strip() for r in replies) and prefix > 250
    # without the copy each of the three slots reads the prefix: about three times as many
    assert evaluated < 1.5 * prefix, f"{evaluated:.0f} prompt tokens evaluated for a {prefix}-token prefix"
