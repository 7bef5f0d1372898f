"""Generated malformed replies for fuzzing: garbage, truncated JSON, wrong shapes, huge strings, odd unicode,
empty, nulls, and streams that are broken at the protocol level. Seeded, so a failure can be replayed."""

from __future__ import annotations

import json
import random
import string

from tests.fake_endpoint import Step, chunk, error, raw, sse, streams

ODD = [
    "\u202e",
    "\u200b",
    "\u200d",
    "\ufeff",
    "\u0000",
    "\u0301",
    "\U0001f489",
    "\u4e2d\u6587",
    "\uffff",
    "\\ud800",
    "\\udfff",
    "\\u0000",
    "\r",
    "\t",
    "\u2028",
]
CATEGORIES = (
    "garbage",
    "truncated",
    "wrong shape",
    "huge",
    "odd unicode",
    "empty",
    "null",
    "broken stream",
    "http error",
)


def garbage(rng: random.Random, n: int) -> str:
    alphabet = string.printable + '{}[]":,\\' + "".join(ODD[:9])
    return "".join(rng.choice(alphabet) for _ in range(n))


def odd_text(rng: random.Random, n: int = 12) -> str:
    return "".join(rng.choice(ODD + list('abc {}"')) for _ in range(n))


def wrong_shape(rng: random.Random, good: dict) -> object:
    key = rng.choice(list(good) or ["answer"])
    return rng.choice(
        [
            [good],
            "just a string",
            42,
            True,
            {},
            {**good, key: rng.choice([None, 5, [1, 2], {"x": 1}, "", True])},
            {k: v for k, v in good.items() if k != key},
            {**good, "extra": {"deep": [None] * 3}},
            {key: good.get(key)},
        ]
    )


def malformed(rng: random.Random, good: dict) -> tuple[str, Step]:
    """One faulty reply for a call whose valid reply would be ``good``: (category, step)."""
    category = rng.choice(CATEGORIES)
    whole = json.dumps(good)
    if category == "garbage":
        return category, streams(garbage(rng, rng.randint(1, 300)), pieces=rng.randint(1, 5))
    if category == "truncated":
        return category, streams(
            whole[: rng.randint(1, max(1, len(whole) - 1))],
            pieces=rng.randint(1, 4),
            finish_reason=rng.choice(["length", "stop", None]),
        )
    if category == "wrong shape":
        return category, streams(json.dumps(wrong_shape(rng, good)))
    if category == "huge":
        filler = rng.choice(["x", "\u00e9", "\U0001f489", "{"]) * rng.randint(20_000, 60_000)
        return category, streams(rng.choice([filler, json.dumps({**good, next(iter(good), "a"): filler})]), pieces=8)
    if category == "odd unicode":
        lone = {
            k: v + rng.choice(["\ud800", "\udfff x", "\u202e\u0000"]) if isinstance(v, str) else v
            for k, v in good.items()
        }  # valid but for a lone surrogate, escaped as JSON allows
        body = rng.choice(
            [
                odd_text(rng),
                '{"' + odd_text(rng, 4) + '": "' + odd_text(rng) + '"}',
                whole.replace('"', '"' + odd_text(rng, 2), 2),
                json.dumps(lone),
            ]
        )
        return category, streams(body, pieces=rng.randint(1, 3))
    if category == "empty":
        return category, rng.choice([streams(""), raw(b""), raw(sse()), raw(b"data: \n\n")])
    if category == "null":
        return category, rng.choice(
            [
                streams("null"),
                raw(sse(chunk(None, "stop"))),
                streams(json.dumps({k: None for k in good})),
                raw(sse({"id": "x", "choices": None, "usage": None})),
            ]
        )
    if category == "broken stream":
        return category, rng.choice(
            [
                raw(b"data: {not json\n\n"),
                raw(sse({"choices": "abc"})),
                raw(sse({"choices": [{"delta": "x"}]})),
                raw(sse({"choices": [{"delta": {"content": 7}}]})),
                raw(sse(chunk("half"))[:-12]),
                raw(sse({"error": {"message": "overloaded"}})),
                raw(b"<html>502 Bad Gateway</html>", "text/html"),
                raw(json.dumps({"choices": [{"message": {"content": whole}}]}).encode(), "application/json"),
                raw(sse([1, 2, 3])),
                raw(b"event: ping\n\n" + sse(chunk(whole[:5]))),
                raw(sse({**chunk(whole, "stop"), "usage": {"prompt_tokens": "many", "completion_tokens": -3}})),
            ]
        )
    return category, error(rng.choice([400, 404, 429, 500, 503]), odd_text(rng))
