"""The embedding benchmark on a small sample: both precisions on the real embedder, figures printed and saved."""

from __future__ import annotations

import json

import pytest

from benchmarks import embed_bench


@pytest.fixture(autouse=True)
def _no_shared_queries(monkeypatch, tmp_path):
    """The teaching cases' questions only, so the test reads no ../shared data and runs in seconds."""
    monkeypatch.setattr(embed_bench, "MIRAGE", tmp_path / "absent")


def test_the_benchmark_compares_bfloat16_with_float32_and_saves_the_figures(tmp_path, monkeypatch, capsys):
    # forced on where the CPU lacks native bfloat16: autocast emulates it there, slowly but alike
    monkeypatch.setattr(embed_bench, "native_bf16", lambda: True)
    out = tmp_path / "embed.json"
    assert embed_bench.main(["--sample", "40", "--out", str(out)]) == 0
    result = json.loads(out.read_text())
    # the sample and the teaching passages; the teaching cases' questions
    assert result["snippets"] > 40 and result["queries"] >= 22
    assert 0.9995 < result["cosine_min"] <= result["cosine_mean"] <= 1.0 + 1e-6
    assert result["neighbours_kept"]["5"] >= 0.9 and result["float32_s"] > 0 and result["bfloat16_s"] > 0
    printed = capsys.readouterr().out
    assert f"ratio {result['ratio']:.2f}" in printed and "top 10:" in printed


def test_a_cpu_without_native_bfloat16_is_told_there_is_nothing_to_compare(tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(embed_bench, "native_bf16", lambda: False)
    out = tmp_path / "embed.json"
    assert embed_bench.main(["--out", str(out)]) == 0
    assert "no native bfloat16" in capsys.readouterr().out and not out.exists()
