"""Partial replies read field by field, as a streamed JSON reply grows."""

from __future__ import annotations

import json

from core.engine.partial_reply import partial_fields

REPLY = {
    "intent": "choose the reliever",
    "entities": ["asthma", "salbutamol"],
    "sufficient": False,
    "claims": [{"claim": "GINA 2019", "ids": ["tp-asthma-k1"]}],
}


def test_every_prefix_of_a_reply_reads_as_the_fields_so_far():
    text = json.dumps(REPLY)
    previous: dict = {}
    for end in range(1, len(text) + 1):
        fields = partial_fields(text[:end])
        assert isinstance(fields, dict), text[:end]
        assert list(fields) == list(REPLY)[: len(fields)]  # fields appear in order, none invented
        for key in list(previous)[:-1]:  # a field before the last one is finished: it never changes again
            assert fields[key] == previous[key]
        previous = fields
    assert previous == REPLY


def test_a_string_field_grows_as_written():
    assert partial_fields('{"intent": "choose the rel') == {"intent": "choose the rel"}
    assert partial_fields('{"entities": ["asthma", "salb') == {"entities": ["asthma", "salb"]}
    assert partial_fields("  {") == {}


def test_prose_and_nothing_are_not_fields():
    assert partial_fields("") is None
    assert partial_fields("The answer is B because") is None
    assert partial_fields("[1, 2") is None
