"""Serving the studio to a room: the address other machines reach it at, the join link of a live room and its QR code,
and a passcode for the owner when none is set."""

from __future__ import annotations

import io
import secrets
import socket
from functools import lru_cache
from urllib.parse import urlsplit

import segno

PASSCODE_ALPHABET = "abcdefghjkmnpqrstuvwxyz23456789"  # nothing to misread when it is read out or copied


def lan_address() -> str:
    """This machine's address on its network (the interface the default route leaves by); 127.0.0.1 with no
    network. A UDP socket is connected only to pick the interface: no packet is sent."""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
        try:
            probe.connect(("10.255.255.255", 1))
            return probe.getsockname()[0]
        except OSError:
            return "127.0.0.1"


def base_url(host: str, port: int) -> str:
    return f"http://[{host}]:{port}" if ":" in host else f"http://{host}:{port}"  # an IPv6 address goes in brackets


def join_url(base: str, code: str) -> str:
    """The link that opens a room's join page: the studio's origin, the Workshop page and the room's code (the code
    is no secret: anyone in the room sees it; the presenter's token never travels in a link)."""
    parts = urlsplit(base)
    return f"{parts.scheme}://{parts.netloc}/workshop?room={code}"


@lru_cache(maxsize=64)
def qr_png(text: str, scale: int = 8) -> bytes:
    buffer = io.BytesIO()
    segno.make(text, error="m").save(buffer, kind="png", scale=scale, border=2)
    return buffer.getvalue()


def qr_text(text: str) -> str:
    """The QR code drawn with block characters, for a terminal."""
    buffer = io.StringIO()
    segno.make(text, error="m").terminal(out=buffer, compact=True)
    return buffer.getvalue()


def new_passcode() -> str:
    """Twelve characters in three groups (about 59 bits): easy to type, not to guess within the sign-in limit."""
    chars = [secrets.choice(PASSCODE_ALPHABET) for _ in range(12)]
    return "-".join("".join(chars[i : i + 4]) for i in range(0, 12, 4))
