"""Reading and writing run files: gzip streamed in both directions, with limits on the file and on what it
unpacks to, so a huge or hostile file is refused early instead of filling memory."""

from __future__ import annotations

import gzip
import io
import json
import os
import zlib
from pathlib import Path
from typing import BinaryIO

from core.studio.runfiles.format import RunFile, RunFileError, parse
from core.studio.runfiles.limits import check_limits, check_texts, too_deep
from core.studio.runfiles.masking import known_secrets, mask_data

MAX_FILE_BYTES = 64 * 2**20  # compressed
MAX_JSON_BYTES = 128 * 2**20  # what it unpacks to
CHUNK = 1 << 20
GZIP_MAGIC = b"\x1f\x8b"


def _mb(n: int) -> str:
    return f"{n / 2**20:,.0f} MB"


def decompress(
    stream: BinaryIO, *, max_file_bytes: int = MAX_FILE_BYTES, max_json_bytes: int = MAX_JSON_BYTES
) -> bytes:
    """The unpacked bytes of a gzip stream, read chunk by chunk; stops at the first limit passed."""
    head = stream.read(2)
    if not head:
        raise RunFileError("the file is empty")
    if head != GZIP_MAGIC:
        hint = " (it looks like plain JSON: compress it with gzip)" if head[:1] in (b"{", b"[") else ""
        raise RunFileError(f"not a gzip file{hint}; run files end in .json.gz")
    inflater = zlib.decompressobj(wbits=31)  # gzip framing
    parts: list[bytes] = []
    unpacked, read = 0, 0
    data = head
    while True:
        chunk = stream.read(CHUNK)
        read += len(chunk)
        if read + len(head) > max_file_bytes:
            raise RunFileError(f"the file is larger than {_mb(max_file_bytes)}, the most a run file may be")
        data += chunk
        if not data:
            raise RunFileError(
                "the file is cut short: its gzip stream ends before its end marker (an interrupted download or copy?)"
            )
        while data:  # output is bounded per call, so a small file that unpacks to gigabytes never fills memory
            try:
                out = inflater.decompress(data, CHUNK)
            except zlib.error as exc:
                raise RunFileError(f"the gzip data is damaged ({exc})") from None
            parts.append(out)
            unpacked += len(out)
            if unpacked > max_json_bytes:
                raise RunFileError(f"the file unpacks to more than {_mb(max_json_bytes)}, the most a run file may hold")
            if inflater.eof:
                if inflater.unused_data.strip(b"\x00") or stream.read(CHUNK).strip(b"\x00"):
                    raise RunFileError("the file has data after its gzip stream ends (several files joined?)")
                return b"".join(parts)
            data = inflater.unconsumed_tail
            if not out and not data:
                break


def read(source: Path | str | BinaryIO, **limits: int) -> RunFile:
    """A run file from a path or an open binary stream (an upload), fully checked; ``RunFileError`` if not."""
    if isinstance(source, str | Path):
        path = Path(source)
        if path.is_dir():
            raise RunFileError(f"{path} is a folder, not a run file")
        try:
            size = path.stat().st_size
        except OSError as exc:
            raise RunFileError(f"{path}: {exc.strerror or exc}") from None
        max_file = limits.get("max_file_bytes", MAX_FILE_BYTES)
        if size > max_file:  # said before anything is read
            raise RunFileError(f"the file is {_mb(size)}; a run file may be at most {_mb(max_file)}")
        with open(path, "rb") as stream:
            raw = decompress(stream, **limits)
    else:
        raw = decompress(source, **limits)
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise RunFileError(f"the unpacked file is not UTF-8 text (byte {exc.start})") from None
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise RunFileError(
            f"the unpacked file is not valid JSON: line {exc.lineno}, column {exc.colno}: {exc.msg}"
        ) from None
    except RecursionError:  # the decoder recurses once per level; a few KB of "[" exhaust it
        raise RunFileError(too_deep(text)) from None
    check_texts(data)  # before masking, so a text past the bounds costs no more than its length check
    run_file = parse(mask_data(data, known_secrets()))
    check_limits(run_file)
    return run_file


def dumps(run_file: RunFile) -> bytes:
    """The file's bytes: compact JSON with credentials masked, gzip with a fixed header time (same runs, same
    bytes, so a recorded pack does not change in version control when nothing in it changed)."""
    text = json.dumps(
        mask_data(run_file.model_dump(mode="json"), known_secrets()), ensure_ascii=False, separators=(",", ":")
    )
    buffer = io.BytesIO()
    with gzip.GzipFile(fileobj=buffer, mode="wb", mtime=0, compresslevel=9) as gz:
        gz.write(text.encode("utf-8"))
    return buffer.getvalue()


def write(run_file: RunFile, path: Path | str) -> Path:
    """Written to a temporary file beside it and moved into place, so a reader never sees half a file."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.partial")
    tmp.write_bytes(dumps(run_file))
    os.replace(tmp, path)
    return path
