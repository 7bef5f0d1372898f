"""The final reader's reply formats, and which one answers best on each backend.

Every paper's reader reasons, then answers. A grammar-constrained reply is written in field order, so on a small
model the order alone moves accuracy: the embedded model's default is the order measured best on the MIRAGE
development split (``python -m core eval ... --param answer_format=...``); an endpoint, whose model is unknown,
keeps the papers' order.
"""

from __future__ import annotations

from typing import Literal

AnswerFormat = Literal["reasoning first", "answer first", "answer only"]
PAPERS_FORMAT: AnswerFormat = "reasoning first"
EMBEDDED_ANSWER_FORMAT: AnswerFormat = "answer first"
