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

from core.engine.retrieval.corpus import Snippet


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
    chunker = Chunker(params, {s.id for s in snippets})
    out = [chunk for snippet in snippets for chunk in chunker.split(snippet)]
    return out, chunker.split_passages


def may_collide(snippet_id: str) -> bool:
    """Whether a corpus's own id looks like a chunk's, so that a chunk must not take it."""
    return bool(_CHUNK_SUFFIX.search(snippet_id))


class Chunker:
    """Splits one snippet at a time (a stream of them too). ``taken`` holds the corpus's ids that a chunk's id must
    not repeat: only ids that look like a chunk's (``may_collide``) can, so a stream collects those first."""

    def __init__(self, params: ChunkParams = ChunkParams(), taken: set[str] | None = None):
        self.params = params
        self.taken = set(taken or ())
        self.split_passages = 0

    def split(self, snippet: Snippet) -> list[Snippet]:
        if len(snippet.text) <= self.params.size:
            return [snippet]
        self.split_passages += 1
        out = []
        for n, text in enumerate(_splitter(self.params.size, self.params.overlap).chunks(snippet.text), start=1):
            chunk_id = f"{snippet.id}#{n}"
            while chunk_id in self.taken:  # a corpus that already uses the name keeps it
                chunk_id += "'"
            self.taken.add(chunk_id)
            out.append(Snippet(chunk_id, snippet.title, text))
        return out
