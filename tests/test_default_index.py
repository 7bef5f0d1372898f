"""The default corpus's index, built as ``make setup`` builds it.

``python -m core setup`` on the tests' small default corpus (tests/conftest.py: the first HPO terms and the whole
teaching pack, where the default corpus lives): the embedded model's files checked, then the corpus converted and
indexed by the code that builds the whole one. The whole one (16,000-odd terms) takes minutes to embed: ``make
setup`` and ``make run`` build it in this checkout's ``.cache``, and where they have, the last test checks it.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from core.engine.retrieval import describe_corpora, open_retriever
from core.engine.retrieval.default_corpus import HPO_FILE
from core.engine.retrieval.hpo import release
from core.engine.retrieval.location import InProcess
from tests.conftest import HPO_TERMS, checkout_default_corpus

REPO = Path(__file__).resolve().parent.parent


def test_setup_indexes_the_default_corpus_where_runs_find_it(tmp_path, monkeypatch):
    monkeypatch.setenv("MEDRAG_INDEX_DIR", str(tmp_path / "indexes"))  # built here, whatever other tests opened
    done = subprocess.run(
        [sys.executable, "-m", "core", "setup"], cwd=REPO, capture_output=True, text=True, timeout=600
    )

    assert done.returncode == 0, done.stderr[-2000:]
    assert "default corpus: hpo, teaching_pack indexed" in done.stdout and "Traceback" not in done.stderr
    corpora = {c.name: c for c in describe_corpora()}
    assert set(corpora) == {"hpo", "teaching_pack"} and all(c.built and not c.stale for c in corpora.values())
    # the first terms (a long definition is indexed as two snippets) and the whole teaching pack
    assert HPO_TERMS <= corpora["hpo"].snippets < 2 * HPO_TERMS and corpora["teaching_pack"].snippets > 100
    assert release() in corpora["hpo"].attribution and corpora["hpo"].index_type == "flat inner product (exact)"


def test_the_default_index_built_in_this_checkout_is_whole_and_current():
    """The HPO definitions' index, the one that takes minutes (the teaching pack's is rebuilt in seconds on first
    use when the pack changed)."""
    paths, index_dir = checkout_default_corpus()
    hpo = paths[0]
    if not (hpo / HPO_FILE).is_file():
        pytest.skip(f"no default corpus in {hpo.parent} (make setup or make run converts and indexes it)")
    [info] = describe_corpora([hpo], cache_dir=index_dir, location=InProcess())
    if not (info.built or info.stale):
        pytest.skip(f"the default corpus is not indexed in {index_dir} (make setup indexes it)")

    assert info.built and not info.stale, info
    assert info.snippets > 15_000 and release() in info.attribution  # whole, from the ontology installed now
    retriever = open_retriever([hpo], cache_dir=index_dir, location=InProcess())
    assert retriever.search("high blood pressure", 5)[0].title == "Hypertension"
