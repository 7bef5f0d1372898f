"""The real app served by ``streamlit run`` in a child process, for browser tests and load benchmarks."""

from __future__ import annotations

import contextlib
import os
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator, Mapping
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextlib.contextmanager
def serve_app(home: Path, env: Mapping[str, str] = {}) -> Iterator[tuple[str, subprocess.Popen]]:
    """The app on a free port with ``home`` as its state folder and no endpoint from this environment unless
    ``env`` names one: (its URL, the server process). Stopped on exit; its log is ``home/streamlit.log``."""
    full = {k: v for k, v in os.environ.items() if k not in ("MEDRAG_BASE_URL", "MEDRAG_MODEL", "MEDRAG_API_KEY")}
    full.update({"MEDRAG_STUDIO_HOME": str(home), **env})
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
            deadline = time.time() + 60
            while True:
                try:
                    urllib.request.urlopen(f"{url}/_stcore/health", timeout=1)
                    break
                except OSError:
                    if time.time() > deadline or server.poll() is not None:
                        raise RuntimeError(
                            f"the app did not start: {(Path(home) / 'streamlit.log').read_text()[-2000:]}"
                        ) from None
                    time.sleep(0.3)
            yield url, server
        finally:
            server.terminate()
            try:
                server.wait(timeout=30)
            except subprocess.TimeoutExpired:  # a call still in flight can hold the server up
                server.kill()
                server.wait()
