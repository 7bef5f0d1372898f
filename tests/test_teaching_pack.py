"""The real teaching pack is complete and consistent, and the loader names the file and line of a bad entry."""

from __future__ import annotations

import json
import re
from collections import Counter

import pytest

from core.studio.teaching import NOTICE, PACK_DIR, ROLES, TeachingPackError, load_cases, load_passages


@pytest.fixture(scope="module")
def cases():
    return load_cases()


@pytest.fixture(scope="module")
def passages():
    return {p.id: p for p in load_passages()}


def test_about_twenty_cases_across_many_specialties(cases):
    assert 18 <= len(cases) <= 26
    assert len({c.specialty for c in cases}) >= 12
    assert len({c.id for c in cases}) == len(cases)


def test_every_case_is_a_four_option_question_with_its_answer_among_them(cases):
    for case in cases:
        assert len(case.question) > 100, case.id  # a vignette, not a bare stem
        assert case.question.rstrip().endswith("?"), case.id
        assert list(case.options) == ["A", "B", "C", "D"], case.id
        assert len(set(case.options.values())) == 4, case.id
        assert case.answer in case.options, case.id
        assert case.teaching_note.strip(), case.id


def test_answers_are_spread_over_the_letters(cases):
    """A pack with one favourite letter would reward a method that always picks it."""
    counts = Counter(c.answer for c in cases)
    assert set(counts) == {"A", "B", "C", "D"}
    assert max(counts.values()) <= len(cases) // 2


def test_each_case_has_three_to_six_key_passages_and_a_near_miss(cases):
    for case in cases:
        assert 3 <= len(case.key_passages) <= 6, case.id
        assert 1 <= len(case.near_miss_passages) <= 3, case.id


def test_at_least_six_outdated_passages_each_saying_what_replaced_it_and_when(passages):
    outdated = [p for p in passages.values() if p.role == "outdated"]
    assert len(outdated) >= 6
    for p in outdated:
        assert re.search(r"\b(19|20)\d\d\b", p.superseded_by), p.id


def test_key_passages_name_the_condition_of_their_case(cases, passages):
    for case in cases:
        anchor = f"{case.title} {case.question}".lower()
        assert any(term.lower() in anchor for term in case.condition_terms), case.id
        for pid in case.key_passages:
            text = passages[pid].contents.lower()
            assert any(term.lower() in text for term in case.condition_terms), pid


def test_passages_are_self_contained_chunks_marked_as_teaching_material(passages):
    assert Counter(p.role for p in passages.values()).keys() == set(ROLES)
    for p in passages.values():
        assert 400 <= len(p.content) <= 900, (p.id, len(p.content))
        assert p.contents == f"{p.title}. {p.content}"
        assert p.note == NOTICE
    assert len({p.content for p in passages.values()}) == len(passages)


def test_pack_files_are_in_the_medrag_chunk_format_with_unique_ids():
    lines = (PACK_DIR / "passages.jsonl").read_text(encoding="utf-8").splitlines()
    rows = [json.loads(line) for line in lines]
    assert all({"id", "title", "content", "contents"} <= row.keys() for row in rows)
    assert len({row["id"] for row in rows}) == len(rows)


def test_readme_carries_the_notice_and_the_licence():
    readme = (PACK_DIR / "README.md").read_text(encoding="utf-8")
    assert "not clinical guidance" in readme.lower()
    assert "CC BY 4.0" in readme


# ---- the loader on broken files -----------------------------------------------------------


def _passage(pid: str, case_id: str = "demo", role: str = "key", **extra) -> dict:
    title, content = "Demo condition: a fact", "A self-contained fact about the demo condition."
    row = {
        "id": pid,
        "title": title,
        "content": content,
        "contents": f"{title}. {content}",
        "case_id": case_id,
        "role": role,
        "specialty": "cardiology",
        "note": NOTICE,
    }
    return row | extra


def _case(**extra) -> dict:
    row = {
        "id": "demo",
        "specialty": "cardiology",
        "title": "Demo condition",
        "condition_terms": ["demo"],
        "question": "Which option is right for the demo condition?",
        "options": {"A": "This one", "B": "That one"},
        "answer": "A",
        "teaching_note": "Because.",
        "key_passages": ["tp-demo-k1"],
        "near_miss_passages": [],
        "outdated_passages": [],
        "note": NOTICE,
    }
    return row | extra


def _write_pack(folder, cases: list[dict], passage_lines: list[str]):
    (folder / "cases.json").write_text(json.dumps(cases), encoding="utf-8")
    (folder / "passages.jsonl").write_text("\n".join(passage_lines) + "\n", encoding="utf-8")
    return folder / "cases.json"


def test_a_malformed_line_is_reported_with_file_and_line(tmp_path):
    broken = '{"id": "tp-demo-k2", "title": '
    cases_path = _write_pack(tmp_path, [_case()], [json.dumps(_passage("tp-demo-k1")), broken])
    with pytest.raises(TeachingPackError, match=r"passages\.jsonl, line 2: .*Invalid JSON"):
        load_cases(cases_path)


def test_a_line_missing_a_field_names_the_field(tmp_path):
    row = _passage("tp-demo-k1")
    del row["content"]
    _write_pack(tmp_path, [_case()], [json.dumps(row)])
    with pytest.raises(TeachingPackError, match=r"line 1: content: Field required"):
        load_passages(tmp_path / "passages.jsonl")


def test_an_outdated_passage_must_say_what_replaced_it(tmp_path):
    _write_pack(
        tmp_path, [_case()], [json.dumps(_passage("tp-demo-k1")), json.dumps(_passage("tp-demo-o1", role="outdated"))]
    )
    with pytest.raises(TeachingPackError, match=r"line 2: .*superseded_by"):
        load_passages(tmp_path / "passages.jsonl")


def test_a_repeated_id_names_both_lines(tmp_path):
    line = json.dumps(_passage("tp-demo-k1"))
    _write_pack(tmp_path, [_case()], [line, "", line])
    with pytest.raises(TeachingPackError, match=r"line 3: id 'tp-demo-k1' is already used on line 1"):
        load_passages(tmp_path / "passages.jsonl")


def test_a_case_pointing_at_a_missing_passage_is_refused(tmp_path):
    cases_path = _write_pack(
        tmp_path, [_case(key_passages=["tp-demo-k1", "tp-demo-k9"])], [json.dumps(_passage("tp-demo-k1"))]
    )
    with pytest.raises(TeachingPackError, match=r"case 'demo', key_passages: 'tp-demo-k9' is not in"):
        load_cases(cases_path)


def test_a_passage_listed_under_the_wrong_role_is_refused(tmp_path):
    cases_path = _write_pack(
        tmp_path,
        [_case(near_miss_passages=["tp-demo-k1"], key_passages=["tp-demo-k2"])],
        [json.dumps(_passage("tp-demo-k1")), json.dumps(_passage("tp-demo-k2"))],
    )
    with pytest.raises(TeachingPackError, match=r"near_miss_passages: 'tp-demo-k1' belongs to case 'demo' as key"):
        load_cases(cases_path)


def test_a_passage_no_case_lists_is_refused(tmp_path):
    cases_path = _write_pack(
        tmp_path, [_case()], [json.dumps(_passage("tp-demo-k1")), json.dumps(_passage("tp-other-k1", case_id="other"))]
    )
    with pytest.raises(TeachingPackError, match=r"not listed by their case .*tp-other-k1"):
        load_cases(cases_path)


def test_an_answer_outside_the_options_names_the_case(tmp_path):
    cases_path = _write_pack(tmp_path, [_case(answer="E")], [json.dumps(_passage("tp-demo-k1"))])
    with pytest.raises(TeachingPackError, match=r"case 1 \(demo\): answer 'E' is not one of the options A, B"):
        load_cases(cases_path)


def test_a_missing_file_is_named(tmp_path):
    with pytest.raises(TeachingPackError, match=r"cases\.json: file not found"):
        load_cases(tmp_path / "cases.json")


def test_a_well_formed_small_pack_loads(tmp_path):
    cases_path = _write_pack(tmp_path, [_case()], [json.dumps(_passage("tp-demo-k1"))])
    [case] = load_cases(cases_path)
    assert case.to_question().render().endswith("A. This one\nB. That one")
    assert case.passage_ids("key") == ["tp-demo-k1"]
