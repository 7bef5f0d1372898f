"""Corpora by name, measured: the download's rate through the real Hub client, and an index build's seconds.

    flock /tmp/medrag-heavy.lock .venv/bin/python -m benchmarks.corpora_bench [--download-mb 200] [--snippets 2000]

Serves a Hub on 127.0.0.1 (``tests/hub_server.py``) with a "textbooks" dataset in MedRAG's layout and runs
``core.engine.retrieval.named.get`` against it, as ``python -m core corpora get textbooks`` does:

1. download: ``--download-mb`` of chunk files in eight files, fetched and each verified (sha256) by the same code;
   on loopback the network costs nothing, so the rate is the ceiling the client and the check set here;
2. index: ``--snippets`` real passages (the shared OpenStax Anatomy and Physiology chunks, from
   ``MEDRAG_SHARED_CORPORA``) served the same way, downloaded and indexed in process on the cores ``MEDRAG_THREADS``
   gives (two here), with the index's bytes per snippet and what ``Capacity`` then says the in-process index holds
   on this machine.

Writes ``benchmarks/results/corpora_bench.json``; ``tables()`` draws its table in ``docs/corpora.md``.
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import platform
import sys
import tempfile
from pathlib import Path

from core.engine.paths import REPO_ROOT

RESULTS = REPO_ROOT / "benchmarks" / "results" / "corpora_bench.json"
PASSAGES = "openstax_anatomy_physiology_2e.jsonl.gz"  # in MEDRAG_SHARED_CORPORA
FILES = 8


def _lines(path: Path, n: int) -> list[bytes]:
    with gzip.open(path, "rb") as fh:
        return [line for _, line in zip(range(n), fh, strict=False)]


def _files(lines: list[bytes], count: int) -> dict[str, bytes]:
    share = -(-len(lines) // count)
    return {f"chunk/book_{i:02d}.jsonl": b"".join(lines[i * share : (i + 1) * share]) for i in range(count)}


def _served(files: dict[str, bytes], work: Path, index: bool):
    from core.engine.retrieval.named import get, plan
    from tests.hub_server import FakeHub, HubServer

    os.environ["MEDRAG_CORPORA_DIR"] = str(work / "corpora")
    os.environ["MEDRAG_INDEX_DIR"] = str(work / "indexes")
    os.environ.pop("MEDRAG_SEARCH_URL", None)
    with HubServer(FakeHub("MedRAG/textbooks", files)) as url:
        os.environ["HF_ENDPOINT"] = url
        return get("textbooks", given=plan("textbooks"), index=index)


def download(megabytes: int, shared: Path) -> dict:
    line = _lines(shared, 1)[0]
    lines = [line] * (megabytes * 2**20 // len(line))
    with tempfile.TemporaryDirectory(prefix="corpora-bench-") as work:
        got = _served(_files(lines, FILES), Path(work), index=False)
    return {"bytes": got.fetched, "files": FILES, "seconds": round(got.download_seconds, 2)}


def index(snippets: int, shared: Path) -> dict:
    from core.engine.retrieval.corpus_index import read_manifest
    from core.engine.retrieval.named import capacity

    with tempfile.TemporaryDirectory(prefix="corpora-bench-") as work:
        got = _served(_files(_lines(shared, snippets), FILES), Path(work), index=True)
        folder = next((Path(work) / "indexes").glob("textbooks-*/"))
        manifest = read_manifest(folder)
        cap = capacity(Path(work) / "indexes")
        text_bytes = got.plan.listing.size / manifest["snippets"]
        return {
            "snippets": manifest["snippets"],
            "seconds": manifest["build_seconds"],
            "index_bytes_per_snippet": round(cap.index_bytes),
            "text_bytes_per_snippet": round(text_bytes),
            "available_bytes": cap.available,
            "fits": cap.fits(text_bytes),
        }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--download-mb", type=int, default=200)
    parser.add_argument("--snippets", type=int, default=2000)
    args = parser.parse_args(argv)
    from core.engine.settings import settings

    shared = settings().shared_corpora / PASSAGES
    if not shared.is_file():
        print(f"needs {shared} (the shared data; MEDRAG_SHARED_CORPORA names its folder)", file=sys.stderr)
        return 2
    data = {
        "machine": f"{platform.machine()}, {os.cpu_count()} cores, threads {settings().compute_threads()}",
        "download": download(args.download_mb, shared),
        "index": index(args.snippets, shared),
    }
    RESULTS.write_text(json.dumps(data, indent=1) + "\n", encoding="utf-8")
    print(json.dumps(data, indent=1))
    return 0


def tables() -> dict[str, str]:
    data = json.loads(RESULTS.read_text(encoding="utf-8"))
    d, i = data["download"], data["index"]
    rate = d["bytes"] / d["seconds"] / 1e6
    rows = [
        "| measured | figure |",
        "|---|---|",
        f"| download through the Hub client, each file verified (loopback, {d['files']} files, "
        f"{d['bytes'] / 1e6:,.0f} MB) | {rate:,.0f} MB/s ({d['seconds']} s) |",
        f"| index build, in process, {i['snippets']:,} OpenStax passages | {i['seconds']} s, "
        f"{i['snippets'] / i['seconds']:,.0f} snippets/s |",
        f"| BM25 weights and vector a snippet (held in memory) | {i['index_bytes_per_snippet']:,} B |",
        f"| text a snippet while building (these passages) | {i['text_bytes_per_snippet']:,} B |",
        f"| memory available when measured | {i['available_bytes'] / 2**30:.1f} GB |",
        f"| snippets the in-process index then holds (these passages) | {i['fits']:,} |",
    ]
    from core.engine.retrieval.named import CATALOG

    big = [c for c in CATALOG.values() if c.snippets > i["fits"]]
    verdict = (
        f"So the in-process index stops fitting this machine at about {i['fits'] / 1e6:.1f} million snippets of "
        f"passages like these: {', '.join(c.name for c in CATALOG.values() if c not in big)} fit; "
        + " and ".join(f"{c.name} ({c.snippets / 1e6:.1f}M)" for c in big)
        + " do not, and go to Qdrant. The download rate is loopback's: a real one is bounded by the network, and "
        "the plan uses the rate the last real download measured."
    )
    return {"corpora_measured": f"Measured on {data['machine']}.\n\n" + "\n".join(rows) + "\n\n" + verdict}


if __name__ == "__main__":
    sys.exit(main())
