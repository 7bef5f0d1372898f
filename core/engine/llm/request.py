"""One call as a backend takes it: what a method asked for, turned into the fields its profile accepts.

A field the backend refuses is not sent, and the trace says so in plain words (a temperature a reasoning model
cannot take, a seed a server ignores, so that sampled reply cannot be repeated exactly).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel

from core.engine.llm.ladder import Learned
from core.engine.llm.profiles import Dialect, Profile
from core.engine.llm.schemas import instruction, json_schema, strict_form
from core.engine.settings import ReasoningEffort

# Room a reasoning model gets for its hidden reasoning on top of the reply's own budget, by effort. The reasoning
# shares ``max_completion_tokens`` with the reply; a reply that reasoning left empty is asked again with twice this.
REASONING_ROOM: dict[str | None, int] = {"low": 4_000, None: 16_000, "medium": 16_000, "high": 32_000}
DEFAULT_TEMPERATURE = 1.0  # what a server samples at when no temperature is sent (OpenAI's default)


@dataclass(frozen=True)
class Asked:
    """What a method asked of one call."""

    temperature: float = 0.0
    max_tokens: int = 512
    seed: int | None = None
    top_p: float | None = None
    presence_penalty: float | None = None

    def sampling(self) -> dict[str, float | int]:
        """The sampling fields asked for; top_p, presence_penalty and seed only when set, so calls that do not set
        them keep their cache keys."""
        asked = {
            "temperature": self.temperature,
            "top_p": self.top_p,
            "presence_penalty": self.presence_penalty,
            "seed": self.seed,
        }
        return {k: v for k, v in asked.items() if v is not None}


@dataclass
class Wire:
    messages: list[dict[str, str]]
    params: dict[str, Any]  # what is sent besides the model and the messages
    key_params: dict[str, Any]  # what the response cache keys on: the params and what was asked but not sent
    notes: list[str] = field(default_factory=list)
    unseeded: bool = False  # a sampled call whose seed the backend could not take


def schema_format(schema: type[BaseModel]) -> dict[str, Any]:
    """The schema as a grammar-compiling server takes it: the model's own, bounds included."""
    return {
        "type": "json_schema",
        "json_schema": {"name": schema.__name__, "schema": schema.model_json_schema(), "strict": True},
    }


def response_format(schema: type[BaseModel], rung: Dialect, profile: Profile) -> dict[str, Any] | None:
    if rung == "grammar":
        return schema_format(schema)
    if rung == "strict":
        form = strict_form(schema, profile.schema_keywords)
        return {"type": "json_schema", "json_schema": {"name": schema.__name__, "schema": form.schema, "strict": True}}
    if rung == "json_schema":
        return {"type": "json_schema", "json_schema": {"name": schema.__name__, "schema": json_schema(schema)}}
    if rung == "json_object":
        return {"type": "json_object"}
    return None


def with_instruction(messages: list[dict[str, str]], schema: type[BaseModel]) -> list[dict[str, str]]:
    """The messages with the reply's schema said at the end of the last one."""
    last = messages[-1]
    return [*messages[:-1], {**last, "content": f"{last['content'].rstrip()}\n\n{instruction(schema)}"}]


def build(
    profile: Profile,
    model: str,
    asked: Asked,
    messages: list[dict[str, str]],
    schema: type[BaseModel] | None,
    rung: Dialect | None,
    learned: Learned,
    effort: ReasoningEffort | None = None,
    room: int | None = None,
) -> Wire:
    """The request for ``rung`` (None: a call that asks for no schema). ``room``: tokens for hidden reasoning."""
    params: dict[str, Any] = {}
    notes: list[str] = []
    unseeded = False
    who = f"{profile.label} ({model})" if model else profile.label
    for name, value in asked.sampling().items():
        if not profile.takes(name) or name in learned.dropped:
            if name == "seed":
                unseeded = asked.temperature > 0
                if unseeded:
                    notes.append(
                        f"not seeded: {who} does not take a seed, so this sampled reply cannot be repeated exactly"
                    )
            elif name != "temperature" or value != DEFAULT_TEMPERATURE:
                notes.append(f"{name} {value:g} could not be set: {who} does not take it")
            continue
        if name == "temperature" and profile.max_temperature is not None and value > profile.max_temperature:
            notes.append(f"temperature {value:g} lowered to {profile.max_temperature:g}, the most {who} takes")
            value = profile.max_temperature
        params[name] = value
    extra_room = (room or REASONING_ROOM[effort]) if profile.reasoning else 0
    limit = asked.max_tokens + extra_room
    most = min(filter(None, (profile.max_output_tokens, learned.token_limit)), default=None)
    if most is not None and limit > most:
        if asked.max_tokens > most:
            notes.append(f"a reply budget of {asked.max_tokens:,} tokens lowered to {most:,}, the most {who} writes")
        limit = most
    params[learned.token_field or profile.token_field] = limit
    if profile.reasoning and profile.reasoning_effort and effort and "reasoning_effort" not in learned.dropped:
        params["reasoning_effort"] = effort
    sent = messages
    if schema is not None and rung is not None:
        if (fmt := response_format(schema, rung, profile)) is not None:
            params["response_format"] = fmt
        if rung in ("json_object", "prompt"):
            sent = with_instruction(messages, schema)
    key_params = {**asked.sampling(), **params}  # asked-but-unsent fields stay in the key, so seeds stay apart
    return Wire(sent, params, key_params, notes, unseeded)
