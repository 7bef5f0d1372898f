"""The decode benchmark's settings reach llama.cpp's parameters, and a setting it does not know is named."""

from __future__ import annotations

from pathlib import Path

import pytest
import xllamacpp

from benchmarks.slot_decode_bench import GGML_TYPE_Q8_0, SETTINGS, main


def test_each_setting_sets_llama_cpps_parameters(tmp_path: Path):
    params = xllamacpp.CommonParams()
    SETTINGS["KV cache q8_0"].apply(params, tmp_path / "model.gguf", 2, tmp_path)
    assert (params.flash_attn_type, params.cache_type_k, params.cache_type_v) == (1, GGML_TYPE_Q8_0, GGML_TYPE_Q8_0)
    assert params.n_parallel == 4 and params.cpuparams.n_threads == 2  # otherwise the shipped server
    params = xllamacpp.CommonParams()
    SETTINGS["no polling"].apply(params, tmp_path / "model.gguf", 2, tmp_path)
    assert params.cpuparams.poll == params.cpuparams_batch.poll == 0 and params.flash_attn_type == -1


def test_an_unknown_setting_is_named(capsys):
    with pytest.raises(SystemExit):
        main(["--settings", "no polling,turbo"])
    assert "unknown setting(s): turbo" in capsys.readouterr().err
