"""The fresh-clone timing script: it imports what it drives the browser with, and tells a finished index from a
half-built one."""

from __future__ import annotations

import json

from benchmarks.first_answer import INDEXED, indexes_ready


def test_the_index_is_ready_only_when_every_default_corpus_has_a_manifest(tmp_path):
    indexes = tmp_path / ".cache" / "indexes"
    assert not indexes_ready(tmp_path)
    (indexes / "hpo-1").mkdir(parents=True)
    (indexes / "hpo-1" / "manifest.json").write_text(json.dumps({"corpus": "hpo"}))
    (indexes / "teaching_pack-1.building-7").mkdir()  # a build in progress has no manifest yet
    assert not indexes_ready(tmp_path)
    (indexes / "teaching_pack-2").mkdir()
    (indexes / "teaching_pack-2" / "manifest.json").write_text("{not json")
    assert not indexes_ready(tmp_path)
    (indexes / "teaching_pack-2" / "manifest.json").write_text(json.dumps({"corpus": "teaching_pack"}))
    assert indexes_ready(tmp_path) and set(INDEXED) == {"hpo", "teaching_pack"}
