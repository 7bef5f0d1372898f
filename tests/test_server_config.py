"""The embedded server's configuration as llama.cpp receives it."""

from __future__ import annotations

from pathlib import Path

import pytest
import xllamacpp

from core.engine.llm import embedded


def applied(config: embedded.ServerConfig) -> xllamacpp.CommonParams:
    params = xllamacpp.CommonParams()
    config.apply(params, Path("main.gguf"), threads=2, slot_dir=Path("slots"))
    return params


def test_shipped_config_shares_prompts_across_slots():
    params = applied(embedded.SHIPPED)
    assert params.n_parallel == embedded.SHIPPED.slots > 1 and params.n_ctx == embedded.SHIPPED.slots * 8192
    assert params.cache_prompt and params.cache_ram_mib > 0 and params.cache_idle_slots
    assert params.cpuparams.n_threads == 2 and params.cpuparams_batch.n_threads == 2
    # calls made together copy their shared prefix between slots through files in this folder
    assert embedded.SHIPPED.copies_prefixes and params.endpoint_slots and params.slot_save_path == "slots"
    with pytest.raises(ValueError, match="folder"):
        embedded.SHIPPED.apply(xllamacpp.CommonParams(), Path("main.gguf"), threads=2)


def test_naive_config_has_one_slot_and_no_prompt_cache():
    params = applied(embedded.NAIVE)
    assert params.n_parallel == 1 and params.n_ctx == 8192
    assert not params.cache_prompt and params.cache_ram_mib == 0 and not params.cache_idle_slots
    assert not embedded.NAIVE.copies_prefixes and not params.slot_save_path
