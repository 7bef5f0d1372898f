"""The corpora the papers searched, by name: MedRAG's MedCorp (Textbooks, StatPearls, PubMed, Wikipedia), and the
shared MedQuAD and OpenStax corpora.

``get(name)`` makes a named corpus searchable: MedRAG's published chunks are downloaded from the Hugging Face Hub
(``core.engine.retrieval.hub``: resumable, checksummed) into ``MEDRAG_CORPORA_DIR/<name>/``, the folder the authors'
toolkit clones (``git clone https://huggingface.co/datasets/MedRAG/<name>``, then reads ``<name>/chunk/*.jsonl``:
``src/utils.py`` of Teddy-XiongGZ/MedRAG); shared corpora are local files found in ``MEDRAG_SHARED_CORPORA``.
Then the corpus is indexed where retrieval runs (``MEDRAG_SEARCH_URL``), by the same build as any corpus.
``plan(name)`` says first what that will take: bytes, an estimated time, and whether the in-process index holds it
on this machine (``Capacity``). StatPearls is not redistributed by MedRAG: its steps say what to fetch and where to
put it, and ``get`` indexes what is there.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import psutil

from core.engine import paths
from core.engine.retrieval.bm25 import BM25Index
from core.engine.retrieval.catalog import CorpusInfo, describe_corpora, human_bytes, open_retriever
from core.engine.retrieval.corpus import CorpusError, CorpusSource
from core.engine.retrieval.corpus_index import DENSE_FILE, read_manifest
from core.engine.retrieval.hub import Listing, complete, download, last_rate, list_files, missing
from core.engine.retrieval.location import InProcess, Qdrant, search_location
from core.engine.retrieval.progress import Progress, no_progress
from core.engine.settings import settings, variable

ASSUMED_RATE = 10 * 2**20  # bytes/s, said as assumed until a download here has measured one
# A build's seconds include loading the embedder: per snippet they mean something only over a corpus this large.
MEASURED_FROM = 1000
MEDRAG = "MedRAG toolkit (Xiong et al., ACL Findings 2024)"


@dataclass(frozen=True)
class NamedCorpus:
    name: str
    title: str
    snippets: int  # as the publisher counts them (MedRAG's README table, rounded there; the shared data's README)
    license: str
    hub_repo: str | None = None  # a MedRAG dataset on the Hub
    pattern: str = "chunk/*.jsonl"
    shared: tuple[str, ...] = ()  # files in MEDRAG_SHARED_CORPORA
    steps: str | None = None  # what the user fetches where nothing can be downloaded for them

    @property
    def folder(self) -> Path:
        """Where a downloaded (or user-fetched) corpus lives."""
        return paths.corpora_dir() / self.name

    def local_paths(self) -> list[Path]:
        """The files or folder to index; CorpusError says what is missing."""
        if self.shared:
            root = settings().shared_corpora
            found = [root / f for f in self.shared]
            if absent := [p for p in found if not p.is_file()]:
                raise CorpusError(
                    f"{self.name}: {', '.join(str(p) for p in absent)} not found; set "
                    f"{variable('shared_corpora')} to the folder that holds {', '.join(self.shared)}"
                )
            return found
        if self.steps:
            try:
                CorpusSource.from_path(self.folder)
            except CorpusError:
                raise CorpusError(self.steps.format(folder=self.folder)) from None
        elif not complete(self.folder):
            raise CorpusError(f"{self.name} is not downloaded yet: python -m core corpora get {self.name}")
        return [self.folder]


STATPEARLS_STEPS = """StatPearls is not redistributed by MedRAG (its Hub repository holds no chunks). The toolkit's steps
(src/utils.py and src/data/statpearls.py of github.com/Teddy-XiongGZ/MedRAG):
  1. download https://ftp.ncbi.nlm.nih.gov/pub/litarch/3d/12/statpearls_NBK430685.tar.gz (NCBI Bookshelf);
  2. unpack it: tar -xzvf statpearls_NBK430685.tar.gz  (a folder statpearls_NBK430685/ of .nxml articles);
  3. chunk it with the toolkit's script: from a MedRAG checkout, with the folder at
     corpus/statpearls/statpearls_NBK430685, run python src/data/statpearls.py (writes corpus/statpearls/chunk/*.jsonl);
  4. put those chunk files in {folder}/chunk/ and run python -m core corpora get statpearls again: it indexes them."""

CATALOG = {
    c.name: c
    for c in (
        NamedCorpus(
            "textbooks",
            "MedRAG Textbooks: 18 medical textbooks (MedQA's), chunked",
            125_800,
            "as the MedQA textbooks; see huggingface.co/datasets/MedRAG/textbooks",
            hub_repo="MedRAG/textbooks",
        ),
        NamedCorpus(
            "pubmed",
            "MedRAG PubMed: 23.9M abstracts of the PubMed baseline, one snippet each",
            23_900_000,
            "NLM's PubMed terms; see huggingface.co/datasets/MedRAG/pubmed",
            hub_repo="MedRAG/pubmed",
        ),
        NamedCorpus(
            "wikipedia",
            "MedRAG Wikipedia: English Wikipedia (2022-03-01), chunked",
            29_900_000,
            "CC BY-SA 3.0; see huggingface.co/datasets/MedRAG/wikipedia",
            hub_repo="MedRAG/wikipedia",
        ),
        NamedCorpus(
            "statpearls",
            "StatPearls: 9.3k clinical decision-support articles (NCBI Bookshelf), chunked by MedRAG's script",
            301_200,
            "StatPearls' own terms (NCBI Bookshelf); fetched by the user",
            steps=STATPEARLS_STEPS,
        ),
        NamedCorpus(
            "medquad",
            "MedQuAD: 16,407 answer passages from NIH consumer-health sites",
            16_407,
            "CC BY 4.0 (Ben Abacha & Demner-Fushman, 2019)",
            shared=("medquad_answers.jsonl.gz",),
        ),
        NamedCorpus(
            "openstax",
            "OpenStax Anatomy and Physiology 2e and Microbiology, chunked",
            6_827,
            "CC BY-NC-SA 4.0 (OpenStax, Rice University)",
            shared=("openstax_anatomy_physiology_2e.jsonl.gz", "openstax_microbiology.jsonl.gz"),
        ),
    )
}


def named(name: str) -> NamedCorpus:
    try:
        return CATALOG[name.lower()]
    except KeyError:
        raise CorpusError(f"no corpus named {name!r}; the names are {', '.join(CATALOG)}") from None


def named_paths(name: str) -> list[Path]:
    """The files or folder of a named corpus that is here (CorpusError says how to get it otherwise)."""
    return named(name).local_paths()


# -- what this machine holds ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Capacity:
    """How many snippets the in-process index holds in this machine's memory, from an index built here.

    Searching holds each corpus's BM25 weights and FAISS vectors in memory (the texts stay on disk in SQLite); a build
    also holds every snippet's text until it is written. So a snippet costs ``index_bytes`` (the largest index built
    here: its BM25 and FAISS files over its snippets) plus ``text_bytes`` (the corpus's bytes over its snippets), and
    the index fits while snippets times that stays within the memory available now."""

    measured_on: str  # the corpus whose index gave the figures
    index_bytes: float  # a snippet's BM25 weights and vector
    seconds: float  # a snippet's share of that index's build
    available: int  # bytes of memory available now

    def fits(self, text_bytes: float) -> int:
        return int(self.available / (self.index_bytes + text_bytes))


def capacity(index_dir: Path | None = None) -> Capacity | None:
    """Figures measured on the largest index built here (None before one of ``MEASURED_FROM`` snippets is built)."""
    best = None
    for manifest_path in Path(index_dir or paths.index_dir()).glob("*/manifest.json"):
        m = read_manifest(manifest_path.parent)
        if m and m.get("snippets") and (best is None or m["snippets"] > best[1]["snippets"]):
            best = (manifest_path.parent, m)
    if best is None or best[1]["snippets"] < MEASURED_FROM:
        return None
    folder, m = best
    held = sum((folder / f).stat().st_size for f in (BM25Index.FILE, DENSE_FILE) if (folder / f).is_file())
    return Capacity(
        m["corpus"], held / m["snippets"], m["build_seconds"] / m["snippets"], psutil.virtual_memory().available
    )


def _text_size(path: Path) -> int:
    """A file's bytes of text: a gzip file says its own in its last four bytes (the size modulo 4 GiB)."""
    if not path.name.endswith(".gz"):
        return path.stat().st_size
    with open(path, "rb") as fh:
        fh.seek(-4, 2)
        return int.from_bytes(fh.read(4), "little")


def _duration(seconds: float) -> str:
    if seconds < 1:
        return "under a second"
    if seconds < 90:
        return f"about {seconds:.0f} s"
    if seconds < 5400:
        return f"about {seconds / 60:.0f} min"
    return f"about {seconds / 3600:.1f} h"


# -- the plan, then the work --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Plan:
    corpus: NamedCorpus
    listing: Listing | None  # None: nothing to download (a shared or user-fetched corpus)
    to_fetch: int  # bytes not yet here
    where: InProcess | Qdrant
    capacity: Capacity | None

    @property
    def text_bytes(self) -> float:
        if self.listing:
            return self.listing.size / self.corpus.snippets
        files = [f for p in self.corpus.local_paths() for f in CorpusSource.from_path(p).files]
        return sum(_text_size(f) for f in files) / self.corpus.snippets

    @property
    def fits(self) -> bool:
        """Whether the corpus can be indexed where retrieval runs (Qdrant holds any size; the in-process index what
        this machine's memory holds, or any size before an index built here has measured it)."""
        if isinstance(self.where, Qdrant) or self.capacity is None:
            return True
        return self.corpus.snippets <= self.capacity.fits(self.text_bytes)

    def lines(self) -> list[str]:
        c = self.corpus
        out = [f"{c.name}: {c.title}; {c.snippets:,} snippets; licence: {c.license}"]
        if self.listing:
            rate = last_rate()
            speed, how = (rate.bytes_per_second, "the rate measured here") if rate else (ASSUMED_RATE, "assumed")
            done = self.listing.size - self.to_fetch
            out.append(
                f"download: {len(self.listing.files)} files, {human_bytes(self.listing.size)} from "
                f"{settings().hub_endpoint}/datasets/{self.listing.repo} (revision {self.listing.revision[:12]})"
                + (f"; {human_bytes(done)} already here and verified" if done else "")
                + (
                    f"; {_duration(self.to_fetch / speed)} at {human_bytes(speed)}/s ({how})"
                    if self.to_fetch
                    else "; nothing left to fetch"
                )
            )
        if self.capacity:
            cap = self.capacity
            if isinstance(self.where, InProcess):
                out.append(
                    f"index: {_duration(c.snippets * cap.seconds)} at the {1 / cap.seconds:.0f} snippets/s "
                    f"measured building {cap.measured_on} here"
                )
            limit = cap.fits(self.text_bytes)
            out.append(
                f"the in-process index holds about {limit:,} snippets of this corpus in the "
                f"{human_bytes(cap.available)} of memory available now ({cap.index_bytes:,.0f} B a snippet of BM25 "
                f"weights and vectors, measured on the {cap.measured_on} index here, plus {self.text_bytes:,.0f} B of "
                f"text held while it builds)"
            )
        out.append(f"where: {self.where.label}")
        if not self.fits:
            out.append(
                f"{c.name} does not fit the in-process index here: set {variable('search_url')} to a Qdrant server "
                f"(docs/retrieval-at-scale.md) and run again"
            )
        return out


def plan(name: str, *, where: InProcess | Qdrant | None = None) -> Plan:
    """What getting the corpus will take; lists the Hub repository for a downloadable one (HubError offline)."""
    corpus = named(name)
    where = where or search_location()
    listing = None
    to_fetch = 0
    if corpus.hub_repo:
        listing = list_files(corpus.hub_repo, corpus.pattern)
        to_fetch = sum(f.size for f in missing(corpus.folder, listing))
    else:
        corpus.local_paths()  # a shared file absent, or StatPearls not fetched yet: say so before anything else
    return Plan(corpus, listing, to_fetch, where, capacity())


@dataclass(frozen=True)
class Got:
    plan: Plan
    paths: list[Path]  # what the index was built over (give these to open_retriever)
    fetched: int  # bytes downloaded now
    download_seconds: float
    indexed: list[CorpusInfo]  # each corpus as indexed (none when only downloaded)

    @property
    def corpora(self) -> list[str]:
        return [info.name for info in self.indexed]


def get(name: str, *, progress: Progress = no_progress, given: Plan | None = None, index: bool = True) -> Got:
    """Download what is missing (verified), then (unless not ``index``) index the corpus where retrieval runs."""
    p = given or plan(name)
    if not p.fits:
        raise CorpusError(p.lines()[-1])
    fetched, seconds = 0, 0.0
    if p.listing and p.to_fetch:
        c = p.corpus
        meta = {"name": c.name, "description": c.title, "license": c.license, "attribution": MEDRAG}
        fetched, seconds = download(p.listing, c.folder, meta, name=c.name, progress=progress)
    found = p.corpus.local_paths()
    if not index:
        return Got(p, found, fetched, seconds, [])
    open_retriever(found, progress=progress, location=p.where)
    return Got(p, found, fetched, seconds, describe_corpora(found, location=p.where))


def status(corpus: NamedCorpus) -> str:
    """Whether a named corpus is here, without reaching the Hub."""
    try:
        found = corpus.local_paths()
    except CorpusError:
        if corpus.shared:
            return f"not found ({variable('shared_corpora')})"
        return "yours to fetch (see get)" if corpus.steps else "not downloaded"
    if corpus.shared:
        return "here (shared)"
    sources = [CorpusSource.from_path(p) for p in found]
    return f"here ({human_bytes(sum(s.size_bytes for s in sources))})"
