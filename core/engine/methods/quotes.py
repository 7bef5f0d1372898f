"""Whether a quote is a document's own words: compared ignoring case (a span that starts a sentence is often
capitalised) and spacing, and, when it is not, how far it is (the words that failed the check start there)."""

from __future__ import annotations

import unicodedata


def plain(text: str) -> str:
    return " ".join(unicodedata.normalize("NFKC", text).split())


def quote_of(text: str) -> str:
    """The quote as it is checked: plain, without the quotation marks a model puts around it."""
    return plain(text).strip('"“” ')


def verbatim_in(quote: str, text: str) -> bool:
    return bool(quote) and quote.casefold() in plain(text).casefold()


def verbatim_prefix(quote: str, text: str) -> int:
    """How many leading characters of ``quote`` (as ``quote_of`` gives it) occur word for word in ``text``: the rest of
    the quote, from there on, is the part the document does not say (the dots a model added to "higher", say)."""
    haystack = plain(text).casefold()
    words = quote.split(" ")
    low, high = 0, len(words)  # the most leading words found, by bisection: a prefix of a found prefix is found
    while low < high:
        middle = (low + high + 1) // 2
        if " ".join(words[:middle]).casefold() in haystack:
            low = middle
        else:
            high = middle - 1
    found = len(" ".join(words[:low]))
    while found < len(quote) and quote[: found + 1].casefold() in haystack:  # into the first word that failed
        found += 1
    return found
