"""On the embedded model's compact lengths every method sends what it sent before lengths came to depend on the
backend: the same messages, reply schemas, sampling fields and token budgets, byte for byte, so the response cache's
keys and the recorded workshop pack stay valid.

Each scenario runs one method, with some knobs, on a scripted model that the methods see as the embedded one (its
profile, so its compact lengths and answer format; its slot and its reading cap). Every request body (the messages
and every field sent besides the model) is hashed as JSON in the order it is sent, and the hashes are compared with
``tests/data/compact_requests.json``, recorded from the same scenarios before budgets were split by backend
(``python -m tests.test_compact_requests --record`` writes it anew: only do so on a commit whose requests are right).
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import sys
import threading
from pathlib import Path
from typing import Any

import pytest

from core.engine.llm.embedded import SHIPPED
from core.engine.llm.ladder import Memory
from core.engine.methods import registry
from core.engine.question import Question
from core.engine.runner import execute
from core.engine.trace import Hit
from tests.fakes import ListRetriever, ScriptedLLM

FIXTURE = Path(__file__).parent / "data" / "compact_requests.json"

MC = Question(
    text="A 54-year-old man has crushing chest pain for an hour and ST elevation in II, III and aVF. "
    "Which artery is most likely occluded?",
    options={"A": "Left anterior descending", "B": "Right coronary", "C": "Left circumflex", "D": "Left main"},
)
YES_NO = Question(
    text="Does aspirin lower mortality after an acute myocardial infarction?", options={"A": "yes", "B": "no"}
)
OPEN = Question(text="Which artery usually supplies the inferior wall of the heart?")


def hits() -> list[Hit]:
    """Forty snippets of about 900 characters in two corpora, so reading budgets bind and corpora differ."""
    words = "coronary artery occlusion inferior wall right ventricle aspirin infarction mortality "
    return [
        Hit(
            snippet_id=f"{corpus}-{i}",
            corpus=corpus,
            title=f"{corpus.title()} {i}",
            text=(f"Passage {i} on the coronary artery. " + words * 12)[:900],
            rank=i + 1,
            score=1.0 / (i + 1),
        )
        for i in range(20)
        for corpus in ("textbooks", "statpearls")
    ]


def fits(schema: dict[str, Any], value: Any) -> bool:
    """Whether a chosen value (None: none chosen) is one this field takes."""
    if value is None:
        return False
    return value in schema.get("enum", [value]) and schema.get("const", value) == value


def instance(schema: dict[str, Any], defs: dict[str, Any], choose: dict[str, Any]) -> Any:
    """The smallest reply ``schema`` accepts: the first of every choice, unless ``choose`` names a field's value."""
    if "$ref" in schema:
        return instance(defs[schema["$ref"].rsplit("/", 1)[1]], defs, choose)
    if "anyOf" in schema:
        shapes = [defs[s["$ref"].rsplit("/", 1)[1]] if "$ref" in s else s for s in schema["anyOf"]]
        matching = [
            s for s in shapes if all(s.get("properties", {}).get(k, {}).get("const", v) == v for k, v in choose.items())
        ]
        return instance((matching or shapes)[0], defs, choose)
    if "const" in schema:
        return schema["const"]
    if "enum" in schema:
        return schema["enum"][0]
    kind = schema.get("type")
    if kind == "object":
        return {
            name: choose[name] if fits(sub, choose.get(name)) else instance(sub, defs, choose)
            for name, sub in schema.get("properties", {}).items()
        }
    if kind == "array":
        n = min(max(schema.get("minItems", 1), 1), schema.get("maxItems", 1))
        return [instance(schema.get("items", {"type": "string"}), defs, choose) for _ in range(n)]
    if kind == "boolean":
        return True
    if kind in ("integer", "number"):
        return 1
    return "noted"


class SchemaReplies(ScriptedLLM):
    """A scripted model that answers each call with the smallest reply the call's schema accepts (``choose`` names
    the values some fields take), and free text where no schema is asked; ``provider`` names its profile."""

    def __init__(self, choose: dict[str, Any], provider: str | None = None, window: int | None = None):
        super().__init__()
        self.endpoint = dataclasses.replace(self.endpoint, provider=provider, context_window=window)
        self.memory = Memory()  # no rung learned by another test's model of the same name
        self._asked = threading.local()
        self.on("", self._reply)
        self.choose = choose

    def _reply(self, _messages) -> Any:
        schema = self._asked.schema
        if schema is None:
            return "A fact [textbooks-0]."
        sent = schema.model_json_schema()
        return instance(sent, sent.get("$defs", {}), self.choose)

    def _request(self, messages, schema, params, on_text, cancel):
        self._asked.schema = schema
        return super()._request(messages, schema, params, on_text, cancel)


class EmbeddedLike(SchemaReplies):
    """Seen by methods as the embedded model: its profile (compact lengths, its answer format), its slot and its
    per-call reading cap."""

    def __init__(self, choose: dict[str, Any]):
        super().__init__(choose, provider="embedded", window=SHIPPED.slot_context)

    @property
    def reading_tokens(self) -> int | None:
        return SHIPPED.read_tokens


# name: (method, question, knobs, fields the replies choose)
SCENARIOS: dict[str, tuple[str, Question, dict[str, Any], dict[str, Any]]] = {
    "cot": ("cot", MC, {}, {}),
    "cot open": ("cot", OPEN, {}, {}),
    "cot reasoning first": ("cot", MC, {"answer_format": "reasoning first"}, {}),
    "cot answer only": ("cot", MC, {"answer_format": "answer only"}, {}),
    "medrag": ("medrag", MC, {}, {}),
    "medrag open": ("medrag", OPEN, {}, {}),
    "medrag reasoning first": ("medrag", MC, {"answer_format": "reasoning first"}, {}),
    "medrag options query, capped": ("medrag", MC, {"query": "question and options", "max_doc_chars": 2000}, {}),
    "imedrag": ("imedrag", MC, {}, {}),
    "imedrag reasoning first": ("imedrag", MC, {"answer_format": "reasoning first", "rounds": 2}, {}),
    "imedrag short answers": ("imedrag", OPEN, {"rounds": 1, "queries": 2, "answer_tokens": 100}, {}),
    "discuss": ("discuss", MC, {}, {}),
    "discuss additions": ("discuss", MC, {"answer_format": "reasoning first"}, {"nothing_to_add": False}),
    "discuss rejected": ("discuss", MC, {}, {"answer": "no"}),
    "discuss judge each": ("discuss", MC, {"judge_each": True}, {}),
    "discuss no verification": ("discuss", OPEN, {"verify": False}, {}),
    "discuss no brainstorm": ("discuss", MC, {"brainstorm": False, "n_experts": 2}, {}),
    "sema sufficient": ("sema", MC, {}, {"sufficient": True}),
    "sema insufficient": ("sema", MC, {"answer_format": "reasoning first"}, {"sufficient": False}),
    "sema three turns": ("sema", OPEN, {"t_max": 3, "m": 2}, {"sufficient": False}),
    "sema ablations": ("sema", MC, {"use_i_agent": False, "use_a_agent": False}, {"sufficient": False}),
    "sema without explorer": ("sema", MC, {"use_e_agent": False}, {}),
    "medrgag": ("medrgag", MC, {}, {}),
    "medrgag reasoning first": ("medrgag", MC, {"answer_format": "reasoning first"}, {}),
    "medrgag nothing useful": ("medrgag", YES_NO, {}, {"useful": False}),
    "medrgag no kgcc": ("medrgag", MC, {"kgcc": False, "n_generated": 2}, {}),
    "medrgag no kads": ("medrgag", MC, {"kads": False}, {}),
    "medrgag no generation": ("medrgag", MC, {"n_generated": 0}, {}),
    "mass": ("mass", MC, {}, {}),
    "mass reasoning first": ("mass", MC, {"answer_format": "reasoning first"}, {}),
    "mass open with answers": ("mass", OPEN, {"n_spans": 2}, {}),
    "mass one view": ("mass", MC, {"views": ["reasoner"], "answer_agent": True}, {}),
}


def body(call: dict[str, Any]) -> str:
    """A request as it goes on the wire, in the order it is sent: the messages, then every field but the model."""
    return json.dumps({"messages": call["messages"], **call["params"]}, ensure_ascii=False)


def requests(name: str) -> list[dict[str, Any]]:
    """The scenario's requests: their hashes (sorted, as concurrent calls come in any order), each with its token
    budget and where its prompt ends, so a difference can be found."""
    method, question, knobs, choose = SCENARIOS[name]
    llm = EmbeddedLike(choose)
    run = execute(method, question, knobs, llm=llm, retriever=ListRetriever(hits()))
    assert run.status == "ok", (name, run.events[-1].payload)
    found = [
        {
            "sha256": hashlib.sha256(body(c).encode("utf-8")).hexdigest(),
            "max_tokens": c["params"]["max_tokens"],
            "ends": c["messages"][-1]["content"][-60:],
        }
        for c in llm.calls
    ]
    return sorted(found, key=lambda r: r["sha256"])


@pytest.mark.parametrize("name", list(SCENARIOS))
def test_compact_lengths_send_what_was_sent_before(name):
    recorded = json.loads(FIXTURE.read_text(encoding="utf-8"))
    assert requests(name) == recorded[name]


def test_every_method_is_covered():
    assert {method for method, *_ in SCENARIOS.values()} == set(registry())


if __name__ == "__main__" and sys.argv[1:] == ["--record"]:
    FIXTURE.write_text(
        json.dumps({name: requests(name) for name in SCENARIOS}, indent=1, ensure_ascii=False) + "\n", encoding="utf-8"
    )
    print(f"wrote {FIXTURE}")
