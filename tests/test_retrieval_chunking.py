"""Long passages are indexed as overlapping chunks (the MedRAG toolkit's 1,000 characters, 200 overlapping), so a
fact deep in a long document is found by the dense index, which reads only a passage's first 256 word pieces, and
a reader gets the part that holds it instead of the document's opening."""

from __future__ import annotations

import json

from core.__main__ import main
from core.engine.retrieval import describe_corpora, open_retriever
from core.engine.retrieval.chunking import ChunkParams, passage_id, split_long
from core.engine.retrieval.corpus import Snippet
from core.engine.retrieval.corpus_index import IndexParams

FILLER = [
    f"Section {n} of the leaflet describes general advice on rest, fluids and follow-up visits. " for n in range(60)
]
DEEP_FACT = "Hairy cell leukemia responds to cladribine, a purine analogue given as a single course. "
LONG = "".join(FILLER[:50]) + DEEP_FACT + "".join(FILLER[50:])  # the fact about 4,600 characters in


def test_long_passages_become_overlapping_chunks_and_short_ones_stay_whole():
    short = Snippet("s1", "Short", "Insulin lowers blood glucose.")
    long = Snippet("l1", "Leaflet", LONG)
    taken = Snippet("l1#2", "Other", "A corpus that already uses the name a chunk would get.")
    out, split = split_long([short, long, taken])
    assert split == 1 and out[0] == short and out[-1] == taken
    chunks = out[1:-1]
    assert [c.id for c in chunks][:3] == ["l1#1", "l1#2'", "l1#3"]  # the taken id is not reused
    assert all(c.title == "Leaflet" and len(c.text) <= 1000 for c in chunks)
    assert len(chunks) >= len(LONG) // 1000 + 1
    assert all(c.text.endswith(".") for c in chunks)  # cut between sentences where they fit
    for before, after in zip(chunks, chunks[1:]):  # each chunk repeats the end of the one before
        assert after.text[:60] in before.text
    assert sum(DEEP_FACT.strip() in c.text for c in chunks) >= 1
    assert {passage_id(s.id) for s in out} == {"s1", "l1"}  # the taken "l1#2" reads as a chunk of l1 too
    assert passage_id("HP:0000011") == "HP:0000011" and passage_id("a#b") == "a#b"
    assert split_long([long], ChunkParams(size=len(LONG)))[1] == 0


def test_a_fact_deep_in_a_long_passage_is_found_in_its_chunk(tmp_path, capsys):
    path = tmp_path / "leaflets.jsonl"
    rows = [
        ("l1", "Blood cancers leaflet", LONG),
        ("s1", "Iron deficiency", "Iron deficiency anaemia is treated with oral iron and its cause is sought."),
        ("s2", "Leukemia overview", "Leukemias are cancers of the white blood cells."),
    ]
    path.write_text("".join(json.dumps({"id": i, "title": t, "content": c}) + "\n" for i, t, c in rows))
    retriever = open_retriever([path], cache_dir=tmp_path / "idx")
    index = retriever.indexes["leaflets"]
    assert index.manifest["split_passages"] == 1 and index.size > len(rows)
    assert index.report.summary().endswith("1 long passage split into chunks")
    query = "cladribine for hairy cell leukemia"
    top = retriever.search(query, 1, mode="dense")[0]
    assert top.snippet_id.startswith("l1#") and DEEP_FACT.strip() in top.text
    # indexed whole, the leaflet's vector holds only its opening: it ranks below an unrelated passage
    whole = open_retriever([path], cache_dir=tmp_path / "whole", params=IndexParams(chunks=ChunkParams(size=10**6)))
    assert [h.snippet_id for h in whole.search(query, 3, mode="dense")][-1] == "l1"
    [info] = describe_corpora([path], cache_dir=tmp_path / "idx")
    assert info.split_passages == 1 and info.snippets == index.size
    assert main(["index", str(path), "--cache-dir", str(tmp_path / "idx")]) == 0
    assert "(1 long passage chunked)" in capsys.readouterr().out
