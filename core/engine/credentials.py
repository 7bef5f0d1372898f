"""Credentials inside URLs (``scheme://user:password@host``) found in one left-to-right pass over the text.

A regular expression that allows a scheme of any length before ``://`` retries from every letter of a long run of
letters, which is quadratic: a 10 KB upload with 150,000 letters once pinned a core for over a minute. This scan
jumps from one ``://`` to the next and reads each character a bounded number of times, so its time grows with the
text's length only. It masks exactly what ``[a-zA-Z][a-zA-Z0-9+.-]*://[^/@\\s]+@`` matches.
"""

from __future__ import annotations

from string import ascii_letters, digits

MASK = "***"
_SCHEME = frozenset(ascii_letters + digits + "+.-")
_LETTERS = frozenset(ascii_letters)


def _userinfo_end(text: str, start: int) -> int:
    """The index of the ``@`` that ends a user-info part starting at ``start``, or -1 when there is none: the part
    stops at the first ``/``, ``@`` or whitespace and must not be empty."""
    end = start
    while end < len(text) and text[end] not in "/@" and not text[end].isspace():
        end += 1
    return end if end > start and end < len(text) and text[end] == "@" else -1


def _has_scheme(text: str, sep: int, floor: int) -> bool:
    """Whether the characters right before ``://`` at ``sep`` (not before ``floor``) form a URL scheme: a run of
    scheme characters holding a letter (the scheme then starts at that letter)."""
    start = sep
    while start > floor and text[start - 1] in _SCHEME:
        start -= 1
    return any(c in _LETTERS for c in text[start:sep])


def mask_userinfo(text: str, mask: str = MASK) -> str:
    """``text`` with the user-info part of every URL in it replaced by ``mask`` (the scheme and host are kept)."""
    out: list[str] = []
    done = 0  # text[:done] is in out already
    sep = text.find("://")
    while sep != -1:
        at = _userinfo_end(text, sep + 3)
        if at != -1 and _has_scheme(text, sep, done):
            out += [text[done : sep + 3], mask, "@"]
            done = at + 1
            sep = text.find("://", done)
        else:
            sep = text.find("://", sep + 1)
    out.append(text[done:])
    return "".join(out)
