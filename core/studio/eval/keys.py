"""What identifies a benchmark question as asked: its text, its options in order, and its gold answer.

Results are reused only for the same asked key, so a benchmark file whose entry under a known id changed
(another question, other options, another gold letter) runs that question again instead of scoring old runs.
"""

from __future__ import annotations

import hashlib
import json


def asked_key(question: str, options: dict[str, str], gold: str) -> str:
    blob = json.dumps([question, list(options.items()), gold], ensure_ascii=False)
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()[:16]
