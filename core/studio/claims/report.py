"""A claim and its check as Markdown a reviewer can read beside the paper: the claim, the paper's figures, what
differs from its setup, the sample size, each arm's accuracy beside the paper's, the paired difference and the
verdict. The same text is the command line's report file, the page's download and docs/claims.md's body."""

from __future__ import annotations

from core.engine.llm.embedded import MODEL_NAME
from core.studio.claims.check import ClaimCheck
from core.studio.claims.model import SILENT, Claim
from core.studio.eval.stats import LEVEL

NOT_THE_PAPERS_MODEL = (
    f"The embedded model ({MODEL_NAME}, 1.5B parameters, quantised to 4 bits) is not the papers' model: a check on "
    "it says whether the claim holds on this model and corpus, not whether the paper's figures are right."
)


def pct(value: float | None) -> str:
    return "–" if value is None else f"{value:.1%}"


def paper_table(claim: Claim) -> str:
    """The paper's cells as it reports them (model × dataset, one column per arm), and any improvement it states
    without both accuracies."""
    lines = []
    if claim.cells:
        lines += [f"| model | dataset | {claim.baseline} | {claim.method} |", "| --- | --- | ---: | ---: |"]
        keys = list(dict.fromkeys((c.model, c.dataset) for c in claim.cells))
        for model, dataset in keys:
            got = {c.arm: c for c in claim.cells if (c.model, c.dataset) == (model, dataset)}
            shown = [
                (f"~{got[a].accuracy:g}" if got[a].approximate else f"{got[a].accuracy:.2f}") if a in got else SILENT
                for a in claim.arms
            ]
            lines.append(f"| {model} | {dataset} | {shown[0]} | {shown[1]} |")
    for d in claim.differences:
        lines.append(
            f"{'' if not lines or not claim.cells else chr(10)}- {d.model}, {d.dataset}: {claim.method} "
            f"{'up to ' if d.up_to else ''}{d.points:g}% above {claim.baseline}"
        )
    return "\n".join(lines)


def claim_markdown(claim: Claim) -> str:
    s = claim.setup
    silent = "".join(f"\n- {what}" for what in claim.silent)
    return (
        f"**{claim.claim}**\n\n"
        f"{claim.paper} (arXiv {claim.arxiv}); figures from {claim.source}.\n\n"
        f"{paper_table(claim)}\n\n"
        f"Arms: `{claim.baseline}` (baseline) and `{claim.method}`. The claim covers MIRAGE's {', '.join(claim.datasets)}. "
        f"The paper's setup: corpus {', '.join(s.corpus) if s.corpus else SILENT}; k {s.k if s.k else SILENT}; "
        f"retriever {s.retriever or SILENT}.\n\n"
        f"Where the paper is silent:{silent or ' nowhere that matters here.'}\n"
    )


def check_markdown(check: ClaimCheck, claim: Claim) -> str:
    rows = [
        f"| arm | accuracy here ({LEVEL:.0%} CI) | correct | errors | paper |",
        "| --- | --- | ---: | ---: | ---: |",
    ]
    for a in check.arms:
        ci = f" ({pct(a.low)}–{pct(a.high)})" if a.low is not None else ""
        rows.append(f"| {a.arm} | {pct(a.accuracy)}{ci} | {a.correct}/{a.n} | {a.errors} | {pct(a.paper)} |")
    if check.difference is not None:
        diff = (
            f"Paired difference ({claim.method} − {claim.baseline}) on {check.n} questions: "
            f"{check.difference:+.1%} ({LEVEL:.0%} CI {check.low:+.1%} to {check.high:+.1%}, Agresti–Min); "
            f"{claim.method} right where {claim.baseline} was wrong {check.c} times, the reverse {check.b} times; "
            f"exact McNemar p = {check.p:.3f}."
        )
    else:
        diff = "No paired difference yet."
    setup = ["| | paper | here |", "| --- | --- | --- |"] + [
        f"| {r.what} | {r.paper} | {r.here}{' (differs)' if r.differs else ''} |" for r in check.setup
    ]
    size = "\n".join(f"- {line}" for line in check.size.lines())
    caveat = f"\n\n{NOT_THE_PAPERS_MODEL}" if MODEL_NAME in check.model else ""
    return (
        f"**Verdict: {check.verdict_text}.**{caveat}\n\n"
        + "\n".join(rows)
        + f"\n\n{diff}\n\nSample size:\n\n{size}\n\nWhat differs from the paper's setup:\n\n"
        + "\n".join(setup)
        + "\n"
    )


def report(check: ClaimCheck, claim: Claim, runs_file: str = "") -> str:
    """The whole report: the claim, then its check, and the run file that holds every question's run."""
    runs = (
        f"\nEvery question's run, with its full trace: `{runs_file}` (a run file: `python -m core runs import`, or History on the page).\n"
        if runs_file
        else ""
    )
    return (
        f"# Claim check: {claim.id}\n\n## The claim\n\n{claim_markdown(claim)}\n## The check\n\n"
        f"{check_markdown(check, claim)}{runs}"
    )
