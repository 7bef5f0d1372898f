"""Provider x method matrix, before and after: how many runs end ok when every method runs against each backend
family's fake server (tests/providers/fakes.py: each holds requests to its family's documented rules).

    .venv/bin/python -m benchmarks.provider_matrix [--before f174f17] [--report]

"after" is the client in this checkout; "before" the client at ``--before`` (the commit before backend profiles),
taken out of git into a temporary folder and run in a subprocess against the same fakes, matrix and knobs
(tests/providers/matrix.py). Writes ``benchmarks/results/provider_matrix.json`` and the page ``docs/providers.md``
(the families, what each profile sends, the documentation each fake follows, and this table); ``--report`` only
rewrites the page from the saved results.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from tqdm import tqdm

from core.engine.paths import REPO_ROOT
from tests.providers.fakes import FAMILIES
from tests.providers.matrix import KNOBS, METHODS, QUESTION, run_family

RESULTS = REPO_ROOT / "benchmarks" / "results" / "provider_matrix.json"
PAGE = REPO_ROOT / "docs" / "providers.md"
BEFORE = "f174f17"
COMMAND = ".venv/bin/python -m benchmarks.provider_matrix --before f174f17"


def matrix() -> dict[str, Any]:
    """Every family against the client importable here: outcomes per method and one request body per family."""
    families = {}
    for name in tqdm(FAMILIES, desc="families", unit="family", file=sys.stderr):
        outcomes, request = run_family(name)
        for outcome in outcomes:  # the fakes' ports change from run to run
            outcome.error = re.sub(r"127\.0\.0\.1:\d+", "127.0.0.1:PORT", outcome.error)
        server = FAMILIES[name]
        families[name] = {
            "label": server.label,
            "model": server.model,
            "profile": server.family,
            "docs": list(server.docs),
            "outcomes": [dataclasses.asdict(o) for o in outcomes],
            "request": request,
        }
    return families


def git(*args: str) -> str:
    return subprocess.run(["git", *args], cwd=REPO_ROOT, capture_output=True, text=True, check=True).stdout.strip()


def describe(rev: str) -> str:
    """The last commit at ``rev`` that changed the client (``core``)."""
    return git("log", "-1", "--format=%h %s", rev, "--", "core")


def matrix_at(rev: str) -> dict[str, Any]:
    """The matrix against the client at ``rev``: its ``core`` taken out of git, first on the path of a subprocess that
    takes the fakes and the matrix from this checkout."""
    with tempfile.TemporaryDirectory() as tmp:
        archive = subprocess.run(["git", "archive", rev, "core"], cwd=REPO_ROOT, capture_output=True, check=True)
        subprocess.run(["tar", "-x", "-C", tmp], input=archive.stdout, check=True)
        out = Path(tmp) / "matrix.json"
        env = {**os.environ, "PYTHONPATH": str(REPO_ROOT), "MEDRAG_STUDIO_HOME": str(Path(tmp) / "home")}
        # The working directory comes first on the path, so ``core`` is the one taken out of git.
        # An earlier core has no floors: today's matrix reaches its modules by today's names.
        run = (
            "import runpy, benchmarks.earlier_core as e; e.under_todays_names(); "
            "runpy.run_module('benchmarks.provider_matrix', run_name='__main__')"
        )
        subprocess.run([sys.executable, "-c", run, "--emit", str(out)], cwd=tmp, env=env, check=True)
        return json.loads(out.read_text())


def tally(families: dict[str, Any]) -> dict[str, str]:
    return {
        name: f"{sum(o['status'] == 'ok' for o in f['outcomes'])}/{len(f['outcomes'])}" for name, f in families.items()
    }


def shortened(request: dict[str, Any] | None, keep: int = 160) -> dict[str, Any] | None:
    """A request body as the page shows it: every field as sent, message texts cut to their start."""
    if request is None:
        return None
    messages = [
        {
            **m,
            "content": m["content"]
            if len(m["content"]) <= keep
            else f"{m['content'][:keep]}… ({len(m['content']):,} characters)",
        }
        for m in request["messages"]
    ]
    return {**request, "messages": messages}


def said(outcome: dict[str, Any]) -> str:
    """What the run's error says, and what the server said where that is not the same."""
    refusal = outcome.get("refusal", "")
    if not refusal or refusal in outcome["error"]:
        return f"{outcome['method']}: {outcome['error']}"
    return f"{outcome['method']}: {outcome['error']} (the server said: {refusal})"


def page(results: dict[str, Any]) -> str:
    before, after = results["before"], results["after"]
    ok_before, ok_after = tally(before["families"]), tally(after["families"])
    lines = [
        "# LLM backends: what each family accepts, and what the studio sends it",
        "",
        "<!-- Generated by benchmarks/provider_matrix.py from benchmarks/results/provider_matrix.json; "
        "do not edit. -->",
        "",
        "The studio talks to every backend through one OpenAI-compatible client; what differs between backend "
        "families is declared in a profile (`core/engine/llm/profiles.py`), picked from the base URL and the model name, or "
        "named with `MEDRAG_PROVIDER`. A structured reply is asked for in the "
        "strongest form the family takes, and a refused form steps down: strict `json_schema` → `json_schema` → "
        "`json_object` with the schema in the prompt → the schema in the prompt alone. The trace says which mode "
        "answered every call, and what could not be sent as asked.",
        "",
        "Each family below is checked by a fake server on 127.0.0.1 that holds requests to the rules its family's "
        "documentation states (`tests/providers/fakes.py`), and every method runs end to end against each "
        "(`tests/test_providers_contract.py`).",
        "",
        "## Runs ending ok, before and after backend profiles",
        "",
        f"Every method ({', '.join(METHODS)}) on one multiple-choice question against each family's fake, through "
        "the runner the command line uses, with the real client and parsing and small knobs "
        f"({'; '.join(f'{m}: ' + ', '.join(f'{k}={v}' for k, v in kv.items()) for m, kv in KNOBS.items())}).",
        "",
        f"- before: `{before['code']}`",
        f"- after: `{after['code']}`",
        f"- reproduce: `{results['command']}`",
        "",
        "| Family | Model | Before | After |",
        "|---|---|---|---|",
    ]
    for name, family in after["families"].items():
        lines.append(f"| {family['label']} | `{family['model']}` | {ok_before.get(name, '–')} | {ok_after[name]} |")
    lines += [
        "",
        "After, method by method (✓ ok, ✗ error):",
        "",
        "| Family | " + " | ".join(METHODS) + " |",
        "|---" * (len(METHODS) + 1) + "|",
    ]
    for name, family in after["families"].items():
        marks = {o["method"]: "✓" if o["status"] == "ok" else "✗" for o in family["outcomes"]}
        lines.append(f"| {family['label']} | " + " | ".join(marks.get(m, "–") for m in METHODS) + " |")
    short = [(f["label"], o) for f in after["families"].values() for o in f["outcomes"] if o.get("short")]
    if short:
        lines += ["", "Lists the model wrote shorter than asked, after one repair (the run went on with them):", ""]
        lines += [f"- {label}, {o['method']}: {'; '.join(o['short'])}" for label, o in short]
    failures = [(f["label"], o) for f in after["families"].values() for o in f["outcomes"] if o["status"] != "ok"]
    if failures:
        lines += ["", "What still fails after:", ""]
        lines += [f"- {label}, {said(o)}" for label, o in failures]
    lines += ["", "Why runs failed before (the first error of each family):", ""]
    for name, family in before["families"].items():
        failed = next((o for o in family["outcomes"] if o["status"] != "ok"), None)
        lines.append(f"- {after['families'][name]['label']}: {said(failed) if failed else 'none failed'}")
    lines += [
        "",
        "The fake Anthropic model writes JSON only when the prompt carries a schema; before profiles no prompt did, "
        'so its "before" figure is what a model that does not guess the shape gets (a real Claude may guess it '
        "from the prompt's words).",
        "",
        "## The families, and the documentation each fake follows",
        "",
        "| Family | Profile (`MEDRAG_PROVIDER`) | Structured output mode | Documentation |",
        "|---|---|---|---|",
    ]
    for family in after["families"].values():
        modes = sorted({m for o in family["outcomes"] for m in o["modes"]} - {"text"})
        docs = "<br>".join(f"[{d.split('//', 1)[1].split('#')[0]}]({d})" for d in family["docs"])
        lines.append(
            f"| {family['label']} (`{family['model']}`) | `{family['profile']}` | {', '.join(modes)} | {docs} |"
        )
    lines += [
        "",
        "## What each profile sends",
        "",
        f'The first structured request each fake took in the run above (CoT\'s answer to "{QUESTION.text}"), '
        "message texts shortened.",
        "",
    ]
    for family in after["families"].values():
        lines += [
            f"### {family['label']} (`{family['model']}`)",
            "",
            "```json",
            json.dumps(shortened(family["request"]), indent=2, ensure_ascii=False),
            "```",
            "",
        ]
    return "\n".join(lines).rstrip() + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--before", default=BEFORE, help=f"the commit whose client is 'before' (default {BEFORE})")
    parser.add_argument("--report", action="store_true", help="run nothing: rewrite the page from the saved results")
    parser.add_argument("--emit", type=Path, help=argparse.SUPPRESS)  # the subprocess's side of --before
    args = parser.parse_args(argv)
    if args.emit:
        args.emit.write_text(json.dumps(matrix()))
        return 0
    if args.report:
        results = json.loads(RESULTS.read_text())
    else:
        dirty = " with uncommitted changes" if git("status", "--porcelain", "core") else ""
        results = {
            "command": COMMAND,
            "before": {"code": describe(args.before), "families": matrix_at(args.before)},
            "after": {"code": describe("HEAD") + dirty, "families": matrix()},
        }
        RESULTS.write_text(json.dumps(results, indent=1, ensure_ascii=False) + "\n")
    PAGE.write_text(page(results))
    before, after = tally(results["before"]["families"]), tally(results["after"]["families"])
    for name in after:
        print(f"{name:18} before {before.get(name, '–'):>5}   after {after[name]:>5}")
    print(f"wrote {RESULTS.relative_to(REPO_ROOT)} and {PAGE.relative_to(REPO_ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
