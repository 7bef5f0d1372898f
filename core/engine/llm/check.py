"""A connection check that asks what the methods ask: one small structured reply, so "ready" means the endpoint
takes a reply schema in some mode (and says which), not only that it answers text."""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Literal

from pydantic import BaseModel, Field

from core.engine.llm.client import LLM


class Ready(BaseModel):
    """The reply the check asks for."""

    ready: Literal["yes"]
    model: str = Field(
        description="the name of the model answering, in a few words", json_schema_extra={"maxLength": 60}
    )


@dataclass
class Checked:
    mode: str  # the structured-output mode that answered
    seconds: float
    said: str  # the model's own name for itself
    notes: list[str] = field(default_factory=list)  # what the server refused on the way, what could not be sent


PROMPT = [{"role": "user", "content": "This is a connection test. Set ready to yes and say which model you are."}]


def check(llm: LLM) -> Checked:
    """One structured call from the top of the ladder (what the endpoint refused before is tried again, so the
    result says what it refuses now). Raises ``LLMError`` with the server's own words when nothing works."""
    llm.memory.forget(llm.backend)
    started = time.perf_counter()
    reply = llm.complete(PROMPT, schema=Ready, max_tokens=60)
    return Checked(
        mode=reply.mode or "", seconds=time.perf_counter() - started, said=reply.parsed.model.strip(), notes=reply.notes
    )
