"""The real app served by ``streamlit run`` in a child process, for browser tests and load benchmarks."""

from __future__ import annotations

import contextlib
import os
import socket
import subprocess
import sys
import urllib.request
from collections.abc import Iterator, Mapping
from pathlib import Path

from tests.e2e.waits import ms, until

REPO = Path(__file__).resolve().parents[2]
# What every test's environment has (tests/conftest.py's ``studio_home`` and ``served_on_loopback``): the corpus opened
# when a run needs it, no endpoint, key, shared mode or owner from the shell. A module names what it wants instead.
TEST_SETTINGS = {"MEDRAG_BACKGROUND_INDEX": "0"}
SERVED: list[Path] = []  # the state folders of the apps running now: their logs go into a failing test's report
NOT_INHERITED = (
    "MEDRAG_BASE_URL",
    "MEDRAG_MODEL",
    "MEDRAG_API_KEY",
    "MEDRAG_MODE",
    "MEDRAG_OWNER_PASSCODE",
    "MEDRAG_OWNER_EMAILS",
)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def healthy(url: str) -> bool:
    try:
        urllib.request.urlopen(f"{url}/_stcore/health", timeout=1)
        return True
    except OSError:
        return False


@contextlib.contextmanager
def serve_app(home: Path, env: Mapping[str, str] = {}) -> Iterator[tuple[str, subprocess.Popen]]:
    """The app on a free port with ``home`` as its state folder, in this process's environment (its corpora and
    index folders, its ``MEDRAG_THREADS``) with the tests' settings and ``env`` on top: (its URL, the server process).
    Stopped on exit; its log is ``home/streamlit.log``."""
    full = {k: v for k, v in os.environ.items() if k not in NOT_INHERITED}
    full.update({**TEST_SETTINGS, "MEDRAG_STUDIO_HOME": str(home), **env})
    port = free_port()
    with open(Path(home) / "streamlit.log", "w") as log:
        server = subprocess.Popen(
            [
                str(Path(sys.executable).with_name("streamlit")),
                "run",
                "streamlit_app.py",
                "--server.headless",
                "true",
                "--server.port",
                str(port),
                "--server.address",
                "127.0.0.1",
            ],
            cwd=REPO,
            env=full,
            stdout=log,
            stderr=subprocess.STDOUT,
        )
        url = f"http://127.0.0.1:{port}"
        try:
            until(lambda: healthy(url) or server.poll() is not None, "the app's health check", "app")
            if server.poll() is not None:
                raise RuntimeError(f"the app did not start: {(Path(home) / 'streamlit.log').read_text()[-2000:]}")
            SERVED.append(Path(home))
            yield url, server
        finally:
            if Path(home) in SERVED:
                SERVED.remove(Path(home))
            server.terminate()
            try:  # the app has a moment to close; nothing after the test reads what it would still write
                server.wait(timeout=ms("glance") / 1000)
            except subprocess.TimeoutExpired:  # a model call still in flight holds the server up
                server.kill()
                server.wait()
