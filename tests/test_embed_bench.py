"""The embedding benchmark runs and prints and saves its figures: both precisions on the real embedder, on the
smallest input (a few HPO snippets of the tests' default corpus and the teaching cases' questions). The figures
themselves are the benchmark's to measure (benchmarks/results/embed_bench.json), not a test's to assert."""

from __future__ import annotations

import json

from benchmarks import embed_bench
from core.engine.retrieval.default_corpus import hpo_dir


def test_the_benchmark_compares_bfloat16_with_float32_and_saves_the_figures(tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(embed_bench, "MIRAGE", tmp_path / "absent")  # no ../shared questions
    monkeypatch.setattr(embed_bench, "ensure_default_corpus", lambda: [hpo_dir()])  # no teaching passages
    # forced on where the CPU lacks native bfloat16: autocast emulates it there, slowly but alike
    monkeypatch.setattr(embed_bench, "native_bf16", lambda: True)
    out = tmp_path / "embed.json"
    assert embed_bench.main(["--sample", "4", "--out", str(out)]) == 0

    result = json.loads(out.read_text())
    assert result["snippets"] == 4 and result["queries"] == 22  # the teaching cases' questions
    assert set(result) >= {"float32_s", "bfloat16_s", "ratio", "cosine_mean", "cosine_min", "neighbours_kept"}
    printed = capsys.readouterr().out
    assert f"ratio {result['ratio']:.2f}" in printed and f"min {result['cosine_min']:.6f}" in printed
    assert all(f"top {k}:" in printed for k in embed_bench.NEIGHBOURS)


def test_a_cpu_without_native_bfloat16_is_told_there_is_nothing_to_compare(tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(embed_bench, "native_bf16", lambda: False)
    out = tmp_path / "embed.json"
    assert embed_bench.main(["--out", str(out)]) == 0
    assert "no native bfloat16" in capsys.readouterr().out and not out.exists()
