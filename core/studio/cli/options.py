"""Options that more than one command takes, declared once: corpus paths and method knobs."""

from __future__ import annotations

import argparse
from pathlib import Path

CORPUS_HELP = "corpus files or folders (several, or repeat); default: the embedded corpus"


def key_value(text: str) -> tuple[str, str]:
    key, sep, value = text.partition("=")
    if not sep or not key.strip():
        raise argparse.ArgumentTypeError(f"expected KEY=VALUE, got {text!r}")
    return key.strip(), value


def at_least_one(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise argparse.ArgumentTypeError(f"{text!r}: must be a whole number, 1 or more")
    return value


def corpus_path(text: str) -> Path:
    if not text.strip():
        raise argparse.ArgumentTypeError("an empty path (a variable or glob that expanded to nothing?)")
    return Path(text)


def add_corpus_paths(parser: argparse.ArgumentParser, flag: str = "--corpus", help: str = CORPUS_HELP) -> None:
    """Corpus files or folders, several after one flag or the flag repeated; an empty one is refused by name."""
    parser.add_argument(flag, action="extend", nargs="+", type=corpus_path, default=[], metavar="PATH", help=help)


def add_knobs(parser: argparse.ArgumentParser, metavar: str, help: str) -> None:
    """``--param KNOB=VALUE``, repeated; ``core.studio.cli.knobs`` reads the values."""
    parser.add_argument("--param", action="append", type=key_value, default=[], metavar=metavar, help=help)
