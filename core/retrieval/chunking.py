"""Long passages split into overlapping chunks before they are indexed, as the MedRAG toolkit chunks its corpora.

The toolkit cuts its textbooks and Wikipedia with LangChain's recursive splitter (1,000 characters, 200 of them
overlapping; ``src/data/textbooks.py``), so every snippet a reader sees is short. A corpus in the chunk format may
still hold whole documents (MedQuAD's answers run to 27,000 characters): the embedding model reads only a passage's
first 256 word pieces, and one such passage fills a reader's whole budget. Passages up to the chunk size stay whole
under their own id; a longer one becomes ``<id>#1``, ``<id>#2``, ... (same title), cut at sentence boundaries
where they fit (``semantic-text-splitter``), else between words.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

from core.retrieval.corpus import Snippet


@dataclass(frozen=True)
class ChunkParams:
    size: int = 1000  # characters of text (the title is added when indexed), the toolkit's chunk_size
    overlap: int = 200  # characters a chunk repeats of the one before, the toolkit's chunk_overlap


_CHUNK_SUFFIX = re.compile(r"#\d+'*$")


def passage_id(snippet_id: str) -> str:
    """The id of the passage a snippet was cut from (its own id when it was not cut)."""
    return _CHUNK_SUFFIX.sub("", snippet_id)


@lru_cache(maxsize=4)
def _splitter(size: int, overlap: int):
    from semantic_text_splitter import TextSplitter

    return TextSplitter(size, overlap=overlap)


def split_long(snippets: list[Snippet], params: ChunkParams = ChunkParams()) -> tuple[list[Snippet], int]:
    """The snippets with every passage longer than ``params.size`` replaced by its chunks where it stood; and how
    many passages were split."""
    out: list[Snippet] = []
    split = 0
    ids = {s.id for s in snippets}
    for snippet in snippets:
        if len(snippet.text) <= params.size:
            out.append(snippet)
            continue
        split += 1
        for n, text in enumerate(_splitter(params.size, params.overlap).chunks(snippet.text), start=1):
            chunk_id = f"{snippet.id}#{n}"
            while chunk_id in ids:  # a corpus that already uses the name keeps it
                chunk_id += "'"
            ids.add(chunk_id)
            out.append(Snippet(chunk_id, snippet.title, text))
    return out, split
