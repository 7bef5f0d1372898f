"""Time from a fresh clone to a first answer: clones a branch into a temporary folder (no ``.venv``, no
``.cache``), runs ``make run`` there and measures, from the moment ``make run`` starts:

- page: the app answers HTTP (``/_stcore/health``);
- first CoT answer: headless chromium opens Ask, picks the first teaching case and runs CoT with its
  defaults until the answer shows;
- index ready: both default corpus indexes (HPO definitions, teaching pack) are saved.

Packages install from a local wheel folder (``--wheels``, made once with
``pip download -d DIR -r requirements-dev.txt pip``) with no index, so the figure is the studio's own setup
rather than the network. On a shared machine run it under the heavy-job lock:
``.venv/bin/python -m benchmarks.first_answer --ref main --wheels DIR``.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import socket
import subprocess
import tempfile
import time
import urllib.request
from pathlib import Path

from playwright.sync_api import sync_playwright

from tests.e2e.conftest import CHROMIUM, CHROMIUM_ARGS, open_page, pick
from tests.e2e.test_model_browser import CASE

REPO = Path(__file__).resolve().parent.parent
RESULTS = Path(__file__).parent / "results" / "first_answer.json"
INDEXED = ("hpo", "teaching_pack")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def indexes_ready(clone: Path) -> bool:
    found = set()
    for manifest in (clone / ".cache" / "indexes").glob("*/manifest.json"):
        try:
            found.add(json.loads(manifest.read_text())["corpus"])
        except (OSError, ValueError, KeyError):
            continue
    return set(INDEXED) <= found


def wait_for(check, timeout: float, every: float = 0.5) -> bool:
    deadline = time.time() + timeout
    while time.time() < deadline:
        if check():
            return True
        time.sleep(every)
    return False


def healthy(url: str) -> bool:
    try:
        urllib.request.urlopen(f"{url}/_stcore/health", timeout=1)
        return True
    except OSError:
        return False


def first_cot_answer(url: str, timeout_ms: int, shots: Path | None, started: float) -> float:
    """Seconds from ``started`` to CoT's answer on the Ask page. With ``shots``, screenshots of the page as it
    opened and answered, and of MedRAG asked for while the corpus index is still being built."""
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        page = browser.new_page(viewport={"width": 1400, "height": 1000})
        page.set_default_timeout(timeout_ms)
        open_page(page, url, "Ask")
        pick(page, "Start from a teaching case", CASE)
        if shots:
            page.screenshot(path=str(shots / "first_answer_1_opened.png"))
        page.get_by_role("button", name="Run", exact=True).click()
        page.locator(".answer-line").wait_for(timeout=timeout_ms)
        answered = time.perf_counter() - started
        if shots:
            page.screenshot(path=str(shots / "first_answer_2_cot_answered.png"))
            pick(page, "Method", "MedRAG")
            page.get_by_role("button", name="Run", exact=True).click()
            page.wait_for_timeout(3000)
            page.screenshot(path=str(shots / "first_answer_3_medrag_asked.png"))
            open_page(page, f"{url}/settings", "Settings")
            page.set_viewport_size({"width": 1400, "height": 2200})  # the page scrolls inside its main block
            page.wait_for_timeout(1000)
            page.screenshot(path=str(shots / "first_answer_4_settings.png"))
        browser.close()
    return answered


def measure(ref: str, wheels: Path, workdir: Path, timeout: float, shots: Path | None = None) -> dict:
    clone = workdir / "clone"
    subprocess.run(["git", "clone", "--quiet", str(REPO), str(clone)], check=True)
    subprocess.run(["git", "checkout", "--quiet", ref], cwd=clone, check=True)
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=clone, capture_output=True, text=True).stdout
    env = {k: v for k, v in os.environ.items() if not k.startswith(("MEDRAG_", "VIRTUAL_ENV"))}
    env.update(PIP_NO_INDEX="1", PIP_FIND_LINKS=f"{wheels} /opt/wheels", STREAMLIT_SERVER_HEADLESS="true")
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    log = open(workdir / "make_run.log", "w")
    started = time.perf_counter()
    make = subprocess.Popen(
        ["make", "run", f"PORT={port}"],
        cwd=clone,
        env=env,
        stdout=log,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    result: dict = {"ref": ref, "commit": commit.strip(), "at": time.strftime("%Y-%m-%d %H:%M:%S")}
    try:
        if not wait_for(lambda: healthy(url) or make.poll() is not None, timeout) or make.poll() is not None:
            raise RuntimeError(f"the app did not start; see {workdir / 'make_run.log'}")
        result["page_s"] = round(time.perf_counter() - started, 1)
        result["index_ready_before_page"] = indexes_ready(clone)
        try:  # an older commit's page may not be drivable: the figures taken so far are kept
            result["first_cot_answer_s"] = round(first_cot_answer(url, int(timeout * 1000), shots, started), 1)
        except Exception as exc:  # noqa: BLE001 - recorded with the result instead
            result["first_cot_answer_error"] = f"{type(exc).__name__}: {exc}".splitlines()[0]
        if not wait_for(lambda: indexes_ready(clone), timeout, every=2):
            raise RuntimeError("the default corpus index was not ready in time")
        result["index_ready_s"] = (
            round(time.perf_counter() - started, 1) if not result["index_ready_before_page"] else None
        )
    finally:
        os.killpg(make.pid, signal.SIGTERM)
        try:
            make.wait(timeout=60)
        except subprocess.TimeoutExpired:  # an older commit's app can outlive SIGTERM; its figures are kept
            os.killpg(make.pid, signal.SIGKILL)
            make.wait(timeout=60)
        log.close()
    return result


def markdown(sittings: list[dict]) -> str:
    """The results file as docs/results/first_answer.md shows it: one row per measured clone, in the order run."""

    def sec(value: float | None) -> str:
        return "—" if value is None else f"{value:.0f} s"

    lines = [
        "| when | ref (commit) | page shown | first CoT answer | default index ready |",
        "| --- | --- | ---: | ---: | ---: |",
    ]
    lines += [
        f"| {s['at']} | {s['ref']} ({s['commit']}) | {sec(s['page_s'])} | {sec(s['first_cot_answer_s'])} | "
        f"{'before the page' if s.get('index_ready_before_page') else sec(s.get('index_ready_s'))} |"
        for s in sittings
    ]
    return (
        "From a fresh clone with no `.venv` and no `.cache` (`make run`, packages from a local wheel folder), "
        "seconds from the start.\n\n" + "\n".join(lines)
    )


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m benchmarks.first_answer", description=__doc__.split("\n\n")[0])
    p.add_argument("--ref", default="HEAD", help="branch or commit to clone (default: this checkout's HEAD)")
    p.add_argument("--wheels", type=Path, required=True, help="folder of wheels for every pinned package")
    p.add_argument("--timeout", type=float, default=1800, help="seconds for each step")
    p.add_argument("--keep", action="store_true", help="keep the clone and its log")
    p.add_argument("--shots", type=Path, help="folder for screenshots of the page as it opens and answers")
    p.add_argument("--out", type=Path, default=RESULTS, help="results file (a JSON list, appended to)")
    args = p.parse_args(argv)
    workdir = Path(tempfile.mkdtemp(prefix="first-answer-"))
    try:
        if args.shots:
            args.shots.mkdir(parents=True, exist_ok=True)
        result = measure(args.ref, args.wheels.resolve(), workdir, args.timeout, args.shots)
    finally:
        if not args.keep:
            subprocess.run(["rm", "-rf", str(workdir / "clone")], check=False)
    print(json.dumps(result, indent=1))
    previous = json.loads(args.out.read_text()) if args.out.is_file() else []
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(previous + [result], indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
