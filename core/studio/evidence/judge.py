"""The optional judge pass: with an endpoint configured, one call per claim asks the model whether the claim's best
candidate documents support it. Its verdict is added beside the offline linker's (``judge_level``/``judge_why`` of
a link), never in its place: a person sees both and which said what. Calls go through the studio's one client, so
the response cache keeps them (a second pass on the same run costs nothing) and their tokens are priced."""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Mapping
from pathlib import Path
from string import Template
from typing import Literal

from pydantic import BaseModel, Field

from core.engine.llm.client import LLM, LLMError
from core.studio.evidence.model import EvidenceMap, JudgeCost, SupportLink
from core.studio.pricing import Billed, Price, billed_usage, cost_of

PROMPT = Template((Path(__file__).parent / "judge_prompt.txt").read_text(encoding="utf-8"))
CANDIDATES = 3  # the documents shown per claim: its best links, by the offline score
SPAN_CHARS = 600  # of each document, around the linked span
WHY_CHARS = 300


class JudgeReply(BaseModel):
    snippet_id: str = Field(max_length=120)
    level: Literal["supported", "partly", "not_found"]
    why: str = Field(max_length=WHY_CHARS)


def _shown(emap: EvidenceMap, link: SupportLink) -> str:
    text = emap.documents[link.snippet_id].text
    start, end = link.span
    lo = max(0, min(start, len(text) - SPAN_CHARS))
    return f"[{link.snippet_id}] {text[lo : max(end, lo + SPAN_CHARS)]}"


def judge_map(emap: EvidenceMap, llm: LLM, prices: Mapping[str, Price] | None = None) -> EvidenceMap:
    """A copy of ``emap`` whose links carry the judge's level and reason beside the offline ones, and what the pass
    cost. A call that fails leaves its claim's links as they were (the offline reason stands alone)."""
    started = time.perf_counter()
    spent = Billed()  # per call: a cached call is not billed, so calls are not summed as one usage
    links = list(emap.links)
    judged = 0
    for claim in emap.claims:
        candidates = emap.links_of(claim.id)[:CANDIDATES]
        if not candidates:
            continue
        prompt = PROMPT.substitute(documents="\n\n".join(_shown(emap, ln) for ln in candidates), claim=claim.text)
        try:
            reply = llm.complete([{"role": "user", "content": prompt}], schema=JudgeReply, temperature=0.0)
        except LLMError as exc:
            spent = spent + billed_usage(exc.usage)
            continue
        judged += 1
        spent = spent + billed_usage(reply.usage)
        verdict: JudgeReply = reply.parsed
        # the judge's verdict goes on the link it names, else on the claim's best one (its level then still reads)
        target = next((ln for ln in candidates if ln.snippet_id == verdict.snippet_id), candidates[0])
        links[links.index(target)] = dataclasses.replace(target, judge_level=verdict.level, judge_why=verdict.why)
    cost = cost_of(llm.model_name, spent, prices or {})
    return dataclasses.replace(
        emap, links=links, judge=JudgeCost(cost, round(time.perf_counter() - started, 3), judged)
    )
