"""A Hugging Face Hub on 127.0.0.1 for the real ``huggingface_hub`` client (pointed at it by ``HF_ENDPOINT``).

It serves what the client calls to list and download a dataset's files (read in ``huggingface_hub``'s
``hf_api.py`` and ``file_download.py``; the endpoints are the Hub's, https://huggingface.co/docs/hub/en/api.md):

- ``GET /api/datasets/{repo}/revision/{rev}?blobs=true``: the repository at one commit (``sha``), each file
  (``siblings``) with its size, git blob id and, for a Git LFS file, ``lfs.sha256``;
- ``HEAD /datasets/{repo}/resolve/{rev}/{path}``: ``X-Repo-Commit``, ``ETag`` (the git blob id), ``X-Linked-Etag``
  and ``X-Linked-Size`` (the LFS sha256 and size, which the client prefers), ``Content-Length``;
- ``GET`` of the same URL: the bytes, or from a ``Range: bytes=N-`` on, as ``206`` with ``Content-Range``.

Faults, each deterministic (no timing): ``cut_once`` paths have their first GET stop after half the bytes (the
connection closed under a full ``Content-Length``); ``fail`` paths answer 403, a status the client does not retry,
so the download stops there; ``corrupt`` paths are served other bytes of the same length than the listed checksum's. Every request is logged as (method, path, Range header).
"""

from __future__ import annotations

import hashlib
import json
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import unquote, urlparse

COMMIT = "3f1e2d4c5b6a79880f1e2d3c4b5a69788796a5b4"


def git_sha1(data: bytes) -> str:
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()


@dataclass
class FakeHub:
    repo: str
    files: dict[str, bytes]
    cut_once: set[str] = field(default_factory=set)
    fail: set[str] = field(default_factory=set)
    corrupt: set[str] = field(default_factory=set)
    log: list[tuple[str, str, str | None]] = field(default_factory=list)
    _cut_done: set[str] = field(default_factory=set)

    def listing(self) -> dict:
        return {
            "id": self.repo,
            "sha": COMMIT,
            "private": False,
            "siblings": [
                {
                    "rfilename": path,
                    "size": len(data),
                    "blobId": git_sha1(data),
                    "lfs": {"size": len(data), "sha256": hashlib.sha256(data).hexdigest(), "pointerSize": 134},
                }
                for path, data in self.files.items()
            ],
        }

    def served(self, path: str) -> bytes:
        data = self.files[path]
        return bytes(255 - b for b in data) if path in self.corrupt else data

    def gets(self, path: str) -> list[str | None]:
        """The Range header of each GET of a file, in order."""
        return [r for method, p, r in self.log if method == "GET" and p.endswith("/" + path)]


def _handler(hub: FakeHub):
    api = f"/api/datasets/{hub.repo}/revision/"
    resolve = f"/datasets/{hub.repo}/resolve/{COMMIT}/"

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *args):  # the test reads ``hub.log``, not stderr
            pass

        def _send(self, status: int, headers: dict[str, str], body: bytes = b"") -> None:
            self.send_response(status)
            for k, v in headers.items():
                self.send_header(k, v)
            self.end_headers()
            if body:
                self.wfile.write(body)

        def _file(self, head: bool) -> None:
            url = urlparse(self.path)
            hub.log.append((self.command, url.path, self.headers.get("Range")))
            if url.path.startswith(api):
                body = json.dumps(hub.listing()).encode()
                self._send(200, {"Content-Type": "application/json", "Content-Length": str(len(body))}, body)
                return
            path = unquote(url.path[len(resolve) :]) if url.path.startswith(resolve) else None
            if path not in hub.files:
                self._send(404, {"X-Error-Code": "EntryNotFound", "Content-Length": "0"})
                return
            if path in hub.fail:
                self._send(403, {"Content-Length": "0"})
                return
            listed, data = hub.files[path], hub.served(path)
            headers = {
                "X-Repo-Commit": COMMIT,
                "ETag": f'"{git_sha1(listed)}"',
                "X-Linked-Etag": f'"{hashlib.sha256(listed).hexdigest()}"',
                "X-Linked-Size": str(len(listed)),
                "Accept-Ranges": "bytes",
                "Content-Type": "application/octet-stream",
            }
            start = 0
            if (asked := self.headers.get("Range")) and asked.startswith("bytes="):
                start = int(asked[len("bytes=") :].split("-")[0])
            body = data[start:]
            headers["Content-Length"] = str(len(body))
            status = 200
            if start:
                status = 206
                headers["Content-Range"] = f"bytes {start}-{len(data) - 1}/{len(data)}"
            if head:
                self._send(status, headers)
                return
            if path in hub.cut_once and path not in hub._cut_done:
                hub._cut_done.add(path)
                self._send(status, headers, body[: len(body) // 2])
                self.close_connection = True  # the rest never comes: the client sees the body end early
                return
            self._send(status, headers, body)

        def do_HEAD(self):
            self._file(head=True)

        def do_GET(self):
            self._file(head=False)

    return Handler


class HubServer:
    """``with HubServer(hub) as url:`` serves ``hub`` on 127.0.0.1 at a free port."""

    def __init__(self, hub: FakeHub):
        self.hub = hub
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(hub))
        self.server.daemon_threads = True
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def __enter__(self) -> str:
        self.thread.start()
        return f"http://127.0.0.1:{self.server.server_address[1]}"

    def __exit__(self, *exc) -> None:
        self.server.shutdown()
        self.server.server_close()
