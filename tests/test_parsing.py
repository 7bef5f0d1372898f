import pytest
from pydantic import BaseModel

from core.engine.llm.parsing import ReplyParseError, extract_json, parse_reply


class Pick(BaseModel):
    reasoning: str
    answer: str


@pytest.mark.parametrize(
    "text",
    [
        '{"reasoning": "r", "answer": "A"}',
        '```json\n{"reasoning": "r", "answer": "A"}\n```',
        'Sure! Here it is:\n```\n{"reasoning": "r", "answer": "A"}\n```\nHope that helps.',
        'The answer: {"reasoning": "r", "answer": "A"} -- end',
        '{"reasoning": "r", "answer": "A"}\n{"other": 1}',
    ],
)
def test_tolerant_forms(text):
    assert parse_reply(text, Pick) == Pick(reasoning="r", answer="A")


def test_braces_inside_strings_do_not_confuse_the_scanner():
    assert extract_json('note {"reasoning": "a } b { c", "answer": "D"} tail') == {
        "reasoning": "a } b { c",
        "answer": "D",
    }


def test_truncated_object_is_reported_as_cut_off():
    with pytest.raises(ReplyParseError, match="cut off") as info:
        parse_reply('{"reasoning": "the', Pick)
    assert info.value.raw == '{"reasoning": "the'


def test_no_json_at_all():
    with pytest.raises(ReplyParseError, match="no complete JSON object"):
        parse_reply("The answer is B.", Pick)


def test_schema_mismatch_names_the_field():
    with pytest.raises(ReplyParseError, match="answer: Field required"):
        parse_reply('{"reasoning": "r"}', Pick)


def test_a_json_list_is_not_an_object():
    with pytest.raises(ReplyParseError):
        extract_json("[1, 2, 3]")
