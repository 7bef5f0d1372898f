"""Claims as data, the sample size before a check (against Connor's formula worked by hand and against a simulation
of the exact test), the check's verdicts from paired results, and the command line's list and dry run."""

from __future__ import annotations

import json
import math
import random

import pytest
from scipy.stats import binomtest

from core.__main__ import main
from core.studio.claims import check_claim, get_claim, load_claims, sample_size
from core.studio.claims.check import claim_plan, paired_interval
from core.studio.claims.model import MIRAGE, ClaimFile
from core.studio.claims.power import detectable, independent_discordance, power_at, questions_needed
from core.studio.claims.report import report
from tests.fakes import item_result


def test_the_papers_headline_comparisons_are_all_there():
    claims = load_claims()
    pairs = {(c.baseline, c.method) for c in claims.values()}
    for pair in [
        ("medrag", "discuss"),
        ("imedrag", "sema"),
        ("medrag", "sema"),
        ("medrag", "medrgag"),
        ("medrag", "imedrag"),
        ("medrag", "mass"),
        ("cot", "medrag"),
    ]:
        assert pair in pairs, pair
    assert set(get_claim("discuss-vs-medrag").datasets) == {"bioasq", "pubmedqa"}
    assert get_claim("imedrag-vs-medrag-medqa").datasets == ["medqa"]
    for claim in claims.values():
        assert set(claim.datasets) <= set(MIRAGE)
        plan = claim_plan(claim, [])
        assert {arm.name for arm in plan.arms} == set(claim.arms)  # presets run under their own names


def test_a_claim_that_names_an_unknown_arm_or_dataset_is_refused():
    good = json.loads(get_claim("sema-vs-no-e").model_dump_json())
    with pytest.raises(ValueError, match="neither a method nor a preset"):
        ClaimFile.model_validate({"claims": [{**good, "method": "sema-rag"}]})
    with pytest.raises(ValueError, match="not MIRAGE subsets"):
        ClaimFile.model_validate({"claims": [{**good, "datasets": ["usmle"]}]})
    with pytest.raises(ValueError, match="unique"):
        ClaimFile.model_validate({"claims": [good, good]})


def test_connor_sample_size_matches_the_formula_worked_by_hand():
    # delta 0.1, psi 0.3: (1.959964 * sqrt(0.3) + 0.841621 * sqrt(0.29))^2 / 0.01 = 233.1 -> 234
    assert questions_needed(0.1, 0.3) == 234
    assert questions_needed(-0.1, 0.3) == 234
    assert questions_needed(0.0, 0.3) is None
    n = questions_needed(0.1, 0.3)
    assert power_at(n, 0.1, 0.3) >= 0.80 > power_at(n - 1, 0.1, 0.3)
    assert detectable(n, 0.3) == pytest.approx(0.1, abs=0.001)
    assert detectable(5, 0.3) is None  # five questions cannot show any difference with 80% power
    with pytest.raises(ValueError, match="cannot be below"):
        questions_needed(0.2, 0.1)


def test_the_sample_size_gives_the_exact_test_about_its_power():
    """Simulated paired outcomes at Connor's n: the exact McNemar test finds the effect about 80% of the time
    (a little less: the exact test is conservative)."""
    p10, p01 = 0.1, 0.2  # baseline right only, method right only: delta 0.1, psi 0.3
    n = questions_needed(p01 - p10, p10 + p01)
    rng = random.Random(7)
    found = 0
    trials = 400
    for _ in range(trials):
        draws = [rng.random() for _ in range(n)]
        b = sum(d < p10 for d in draws)
        c = sum(p10 <= d < p10 + p01 for d in draws)
        found += binomtest(b, b + c, 0.5).pvalue < 0.05
    assert 0.70 <= found / trials <= 0.88


def test_sample_size_from_the_papers_cells_and_from_a_stated_improvement():
    size = sample_size(get_claim("sema-vs-imedrag"))
    assert size.effect.baseline == pytest.approx((85.86 + 74.78 + 65.65 + 50.60 + 80.58) / 500)
    assert size.effect.cells and size.effect.model == "deepseek-v3.1"
    assert size.psi == pytest.approx(independent_discordance(size.effect.baseline, size.effect.method))
    assert size.needed == questions_needed(size.effect.delta, size.psi)
    one = sample_size(get_claim("sema-vs-imedrag"), 40, datasets=["pubmedqa"])
    assert (one.effect.baseline, one.effect.method) == (pytest.approx(0.506), pytest.approx(0.592))
    assert one.n == 40 and one.power < 0.8 and one.detectable > one.effect.delta
    stated = sample_size(get_claim("discuss-vs-medrag"), datasets=["bioasq"])
    assert stated.effect.delta == pytest.approx(0.1667) and not stated.effect.cells
    assert "up to" in stated.effect.basis
    smaller = sample_size(get_claim("discuss-vs-medrag"), datasets=["bioasq"], discordance=0.25)
    assert smaller.needed < stated.needed  # fewer disagreements: fewer questions
    silent = sample_size(get_claim("imedrag-vs-medrag-medqa"))
    assert silent.effect is None and silent.needed is None
    given = sample_size(get_claim("imedrag-vs-medrag-medqa"), effect=0.05)
    assert given.needed == questions_needed(0.05, independent_discordance(0.475, 0.525))


def _rows(claim, outcomes):
    """Result rows for both arms from (baseline correct, method correct) per question."""
    rows = []
    for i, (base, new) in enumerate(outcomes):
        for arm, right in zip(claim.arms, (base, new)):
            rows.append(
                item_result(
                    arm=arm, method=arm, dataset="mmlu", qid=f"q{i}", asked=f"k{i}", correct=int(right),
                    predicted="A" if right else "B", run_id=f"{arm}-{i}", model="m", corpus='["openstax"]',
                )
            )  # fmt: skip
    return rows


@pytest.mark.parametrize(
    "outcomes, verdict",
    [
        ([(False, True)] * 12 + [(True, True)] * 8, "consistent"),
        ([(True, False)] * 12 + [(True, True)] * 8, "opposite"),
        ([(False, True)] * 2 + [(True, False)] * 1 + [(True, True)] * 7, "too few"),
    ],
)
def test_verdicts_from_paired_results(outcomes, verdict):
    claim = get_claim("medrag-vs-cot")
    check = check_claim(claim, _rows(claim, outcomes))
    assert check.verdict == verdict
    assert check.n == len(outcomes)
    if verdict == "too few":
        assert f"n needed: {check.size.needed:,}" in check.verdict_text
    assert check.low <= check.difference <= check.high
    assert [r.what for r in check.setup] == ["model", "corpus", "k", "retriever"]
    assert check.setup[1].paper == "medcorp" and check.setup[1].here == "openstax" and check.setup[1].differs
    text = report(check, claim, "runs.json.gz")
    assert check.verdict_text in text and "runs.json.gz" in text
    json.dumps(check.as_dict())


def test_no_difference_after_the_questions_needed_says_the_effect_is_smaller():
    claim = get_claim("sema-vs-cot")  # gemini-2.0-flash: 54.66 -> 78.08, a large effect: few questions needed
    needed = sample_size(claim).needed
    outcomes = [(True, False), (False, True)] * math.ceil(needed / 2) + [(True, True)] * 10
    check = check_claim(claim, _rows(claim, outcomes))
    assert check.verdict == "smaller" and check.difference == 0


def test_paired_interval_widens_with_fewer_questions():
    narrow, wide = paired_interval(10, 30, 400), paired_interval(1, 3, 40)
    assert narrow[0] < 0.05 < narrow[1]
    assert wide[1] - wide[0] > narrow[1] - narrow[0]
    assert paired_interval(0, 0, 10)[0] < 0 < paired_interval(0, 0, 10)[1]


def test_claims_list_prints_every_claim(capsys):
    assert main(["claims", "list"]) == 0
    out = capsys.readouterr().out
    for claim_id in load_claims():
        assert claim_id in out
    assert "questions needed: 431" in out  # sema-vs-imedrag on deepseek-v3.1


def test_dry_run_sizes_the_check_without_calling_a_model(capsys):
    assert main(["claims", "check", "sema-vs-imedrag", "--dry-run", "--datasets", "pubmedqa"]) == 0
    out = capsys.readouterr().out
    assert "questions needed: 528" in out
    assert "smallest difference" in out and "tokens a question" in out and "free (local)" in out
    assert main(["claims", "check", "imedrag-vs-medrag-medqa", "--dry-run"]) == 2
    assert "give --n" in capsys.readouterr().err


def test_check_runs_both_arms_resumably_and_writes_the_report_and_run_file(tmp_path, monkeypatch, capsys):
    from core.studio.runfiles import read
    from tests.fakes import ListRetriever, ScriptedLLM, make_hits
    from tests.test_eval import BENCH

    bench = tmp_path / "mini.json"
    bench.write_text(json.dumps(BENCH))
    llm = ScriptedLLM().enqueue(*[{"reasoning": "r", "answer": "A", "cited_ids": []}] * 20)
    monkeypatch.setattr("core.studio.cli.claims.LLM", lambda: llm)
    monkeypatch.setattr("core.engine.retrieval.open_retriever", lambda *a, **k: ListRetriever(make_hits(4)))
    out = tmp_path / "out"
    argv = ["claims", "check", "medrag-vs-cot-sema-table", "--n", "4", "--datasets", "medqa,pubmedqa"]
    assert main([*argv, "--bench", str(bench), "--out", str(out)]) == 0
    assert len(llm.calls) == 8  # 2 questions a dataset, 2 arms
    text = (out / "report.md").read_text()
    assert "Verdict: not enough questions to tell (n needed: " in text
    assert "| medrag | 75.0% (30.1%–95.4%) | 3/4 | 0 | 60.9% |" in text  # A is right on q2, q3, p1 (q1's is B)
    check = json.loads((out / "check.json").read_text())
    assert check["n"] == 4 and check["b"] == check["c"] == 0
    assert len(read(out / "runs.json.gz").runs) == 8
    assert main([*argv, "--bench", str(bench), "--out", str(out)]) == 0  # resumed: nothing asked again
    assert len(llm.calls) == 8
