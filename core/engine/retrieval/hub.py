"""Corpus files from the Hugging Face Hub, through its own client (``huggingface_hub``), checked against the Hub's
checksums and kept with them.

A listing (``HfApi.dataset_info(files_metadata=True)``) pins the repository to one commit and gives every file's
size and checksum: the sha256 of a file kept in Git LFS (what MedRAG's chunk files are), the git blob sha1 of a small
one. Each file is downloaded into the corpus folder (``hf_hub_download(local_dir=...)``), hashed, and recorded in
the folder's ``corpus.json`` only once its checksum matches, so a download stopped midway carries on with the files
not yet recorded; within a file, the client itself resumes a transfer cut off midway with a ``Range`` request. A
file whose checksum does not match is deleted and named, and the download stops there.
"""

from __future__ import annotations

import contextlib
import fnmatch
import hashlib
import json
import os
import threading
import time
from collections.abc import Iterator
from dataclasses import asdict, dataclass
from pathlib import Path

from tqdm import tqdm

from core.engine.retrieval.corpus import METADATA_FILE, CorpusError
from core.engine.retrieval.progress import BYTE_STAGES, Progress, no_progress
from core.engine.settings import settings

DOWNLOAD_STAGE = BYTE_STAGES[1]
RATE_FILE = "hub_rate.json"  # the last download's measured rate, for the next one's estimate


class HubError(CorpusError):
    """The Hub could not be reached or listed, or a file it sent was not the file it listed."""


class ChecksumMismatch(HubError):
    pass


@dataclass(frozen=True)
class HubFile:
    path: str  # in the repository, e.g. chunk/Anatomy_Gray.jsonl
    size: int
    sha256: str | None  # a Git LFS file's
    git_sha1: str | None  # a file kept in git itself (its blob id)

    @property
    def checksum(self) -> str:
        return f"sha256:{self.sha256}" if self.sha256 else f"git-sha1:{self.git_sha1}"


@dataclass(frozen=True)
class Listing:
    repo: str
    revision: str  # the commit every file is downloaded from
    files: list[HubFile]

    @property
    def size(self) -> int:
        return sum(f.size for f in self.files)


@contextlib.contextmanager
def _online() -> Iterator[None]:
    """The studio keeps the Hub client offline (``dense.py``: the embedder is a local folder and must never reach
    out); a corpus download is the one place a user asked for the network, so the client is online for its calls."""
    from huggingface_hub import constants

    with _online_lock:
        was = constants.HF_HUB_OFFLINE
        constants.HF_HUB_OFFLINE = False
        try:
            yield
        finally:
            constants.HF_HUB_OFFLINE = was


_online_lock = threading.Lock()


def list_files(repo: str, pattern: str, revision: str = "main") -> Listing:
    """The dataset repository's files matching ``pattern``, with sizes and checksums, at one commit."""
    import httpx2
    from huggingface_hub import HfApi

    endpoint = settings().hub_endpoint
    try:
        with _online():
            info = HfApi(endpoint=endpoint).dataset_info(repo, revision=revision, files_metadata=True)
    except (httpx2.HTTPError, OSError) as exc:
        raise HubError(f"cannot list {repo} on {endpoint}: {exc}") from None
    files = [
        HubFile(s.rfilename, s.size or 0, s.lfs.sha256 if s.lfs else None, None if s.lfs else s.blob_id)
        for s in info.siblings or []
        if fnmatch.fnmatch(s.rfilename, pattern)
    ]
    if not files:
        raise HubError(f"{repo} on {endpoint} holds no files matching {pattern!r}")
    return Listing(repo, info.sha or revision, sorted(files, key=lambda f: f.path))


def digest(path: Path, file: HubFile) -> str:
    """The file's checksum computed as the Hub computes the listed one."""
    if file.sha256:
        h = hashlib.sha256()
    else:
        h = hashlib.sha1()
        h.update(f"blob {path.stat().st_size}\0".encode())
    with open(path, "rb") as fh:
        while block := fh.read(1 << 20):
            h.update(block)
    return f"{'sha256' if file.sha256 else 'git-sha1'}:{h.hexdigest()}"


def recorded(folder: Path) -> dict:
    """The folder's ``corpus.json`` (empty when there is none)."""
    try:
        return json.loads((folder / METADATA_FILE).read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError):
        return {}


def _record(folder: Path, meta: dict) -> None:
    tmp = folder / f".{METADATA_FILE}.tmp"
    tmp.write_text(json.dumps(meta, indent=1), encoding="utf-8")
    os.replace(tmp, folder / METADATA_FILE)


def complete(folder: Path) -> bool:
    """Whether every file the Hub listed has been downloaded and verified here."""
    source = recorded(folder).get("source", {})
    return bool(source.get("files")) and len(source["files"]) == source.get("listed")


def missing(folder: Path, listing: Listing) -> list[HubFile]:
    """The listed files not yet downloaded and verified here (recorded with the same checksum, and of that size)."""
    done = recorded(folder).get("source", {}).get("files", {})
    return [
        f
        for f in listing.files
        if done.get(f.path, {}).get("checksum") != f.checksum
        or not (folder / f.path).is_file()
        or (folder / f.path).stat().st_size != f.size
    ]


def _bar_class(progress: Progress, stage: str, before: list[int], total: int) -> type[tqdm]:
    """A tqdm class the Hub client draws its bar with: it shows nothing itself and reports the bytes of the whole
    download (``before[0]``: bytes of the files done before this one) to ``progress``."""

    class Bar(tqdm):
        def __init__(self, *args, **kwargs):
            kwargs["disable"] = True
            super().__init__(*args, **kwargs)
            self.got = kwargs.get("initial", 0)

        def update(self, n=1):
            self.got += n or 0
            progress(stage, before[0] + self.got, total)

    return Bar


def download(
    listing: Listing, folder: Path, meta: dict, *, name: str, progress: Progress = no_progress
) -> tuple[int, float]:
    """Fetch the files ``missing`` from ``folder``, verify each and record it in ``corpus.json`` (``meta`` is the
    rest of that file: name, description, licence). Returns the bytes fetched and the seconds it took."""
    import httpx2
    from huggingface_hub import hf_hub_download

    folder.mkdir(parents=True, exist_ok=True)
    endpoint = settings().hub_endpoint
    todo = missing(folder, listing)
    listed = {f.path for f in listing.files}
    done = {k: v for k, v in recorded(folder).get("source", {}).get("files", {}).items() if k in listed}
    source = {"hub": listing.repo, "endpoint": endpoint, "revision": listing.revision, "listed": len(listing.files)}
    record = meta | {"source": source | {"files": done}}
    stage, total, before = DOWNLOAD_STAGE + name, sum(f.size for f in todo), [0]
    bar = _bar_class(progress, stage, before, total)
    started = time.perf_counter()
    progress(stage, 0, total)
    for file in todo:
        try:
            with _online():
                got = Path(
                    hf_hub_download(
                        listing.repo,
                        file.path,
                        repo_type="dataset",
                        revision=listing.revision,
                        local_dir=folder,
                        endpoint=endpoint,
                        tqdm_class=bar,
                    )
                )
        except (httpx2.HTTPError, OSError) as exc:
            raise HubError(
                f"downloading {listing.repo}/{file.path} from {endpoint} failed: {exc}; the files verified so far "
                f"are kept, and the same command carries on from the next one"
            ) from None
        found = digest(got, file)
        if found != file.checksum:
            got.unlink()
            raise ChecksumMismatch(
                f"{listing.repo}/{file.path}: the file received has checksum {found}, but the Hub lists "
                f"{file.checksum} for it (revision {listing.revision[:12]}); the file was deleted and nothing was "
                f"indexed. Run the command again to download it anew; if it fails again, the copy on the Hub or on "
                f"the way here is damaged"
            )
        done[file.path] = {"size": file.size, "checksum": file.checksum}
        _record(folder, record)
        before[0] += file.size
        progress(stage, before[0], total)
    seconds = time.perf_counter() - started
    if before[0]:
        save_rate(before[0], seconds)
    return before[0], seconds


# -- the rate the next estimate uses -----------------------------------------------------------------------------


@dataclass(frozen=True)
class Rate:
    bytes_per_second: float
    measured_at: str


def _rate_path() -> Path:
    from core.engine import paths

    return paths.corpora_dir() / RATE_FILE


def save_rate(size: int, seconds: float) -> None:
    rate = Rate(size / max(seconds, 1e-3), time.strftime("%Y-%m-%d %H:%M:%S"))
    _rate_path().write_text(json.dumps(asdict(rate)), encoding="utf-8")


def last_rate() -> Rate | None:
    try:
        return Rate(**json.loads(_rate_path().read_text(encoding="utf-8")))
    except (OSError, json.JSONDecodeError, TypeError):
        return None
