"""Time from a click on Run to the first token of a reply visible on the Ask page, in headless chromium, on the
embedded model with the response cache off. Prints each repetition and the median per method.

    .venv/bin/python -m benchmarks.first_token --methods cot,sema --repeats 3

Run it on an otherwise idle machine: the figure means nothing on a busy one. A first run of each method loads the
model and the corpus and is not counted. Each run is stopped as soon as its first token shows, so a repetition costs seconds.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

from playwright.sync_api import sync_playwright

REPO = Path(__file__).resolve().parents[1]
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-sync",
    "--no-first-run",
    "--disable-quic",
]
CASE = "Pulmonology · Mild asthma: reliever and controller treatment"
# a reply being written shows its header, then its first field or words: that second line is the first token
FIRST_TOKEN_JS = """() => [...document.querySelectorAll('[class*="st-key-writing-"]')].some(box => {
    const parts = box.querySelectorAll('[data-testid="stMarkdownContainer"]');
    return parts.length > 1 && !parts[1].innerText.includes('reading the prompt');
})"""


def serve(home: Path, port: int) -> subprocess.Popen:
    env = {k: v for k, v in os.environ.items() if k not in ("MEDRAG_BASE_URL", "MEDRAG_MODEL", "MEDRAG_API_KEY")}
    env.update(MEDRAG_STUDIO_HOME=str(home), MEDRAG_CACHE="off")
    server = subprocess.Popen(
        [
            str(Path(sys.executable).with_name("streamlit")),
            "run",
            "streamlit_app.py",
            "--server.port",
            str(port),
            "--server.address",
            "127.0.0.1",
        ],
        cwd=REPO,
        env=env,
        stdout=open(home / "streamlit.log", "w"),
        stderr=subprocess.STDOUT,
    )
    for _ in range(200):
        try:
            urllib.request.urlopen(f"http://127.0.0.1:{port}/_stcore/health", timeout=1)
            return server
        except OSError:
            time.sleep(0.3)
    raise SystemExit(f"the app did not start; see {home / 'streamlit.log'}")


def settle(page) -> None:
    page.wait_for_timeout(300)
    page.locator('[data-testid="stStatusWidget"]').wait_for(state="hidden", timeout=600_000)


def first_token_seconds(page, url: str, method: str) -> float:
    page.goto(f"{url}/ask")
    page.get_by_role("heading", name="Ask", level=1).wait_for()
    page.locator('[data-testid="stSelectbox"]', has_text="Method").click()
    page.get_by_role("option", name=method, exact=True).click()
    settle(page)
    page.locator('[data-testid="stSelectbox"]', has_text="Start from a teaching case").click()
    page.get_by_role("option", name=CASE).click()
    settle(page)
    started = time.perf_counter()
    page.get_by_role("button", name="Run", exact=True).click()
    page.wait_for_function(FIRST_TOKEN_JS, timeout=600_000, polling=100)
    seconds = time.perf_counter() - started
    page.get_by_role("button", name="Stop").click()
    page.get_by_text("stopped after").first.wait_for(timeout=600_000)
    settle(page)
    return seconds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--methods", default="cot,sema", help="registry names, e.g. cot,sema")
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    from core.engine.methods import get

    labels = [get(name).label for name in args.methods.split(",")]
    port = 8700 + os.getpid() % 200
    with tempfile.TemporaryDirectory() as tmp:
        server = serve(Path(tmp), port)
        try:
            with sync_playwright() as p:
                browser = p.chromium.launch(executable_path="/usr/bin/chromium", args=CHROMIUM_ARGS)
                page = browser.new_page(viewport={"width": 1440, "height": 1000})
                for label in dict.fromkeys(["CoT", *labels]):  # loads the model, then each method's corpus
                    warm = first_token_seconds(page, f"http://127.0.0.1:{port}", label)
                    print(f"warm-up {label} (loading included, not counted): {warm:.1f} s", flush=True)
                for label in labels:
                    times = [first_token_seconds(page, f"http://127.0.0.1:{port}", label) for _ in range(args.repeats)]
                    print(
                        f"{label}: "
                        + ", ".join(f"{t:.1f}" for t in times)
                        + f" s; median {statistics.median(times):.1f} s (n={len(times)})",
                        flush=True,
                    )
                browser.close()
        finally:
            server.terminate()
            server.wait(timeout=30)


if __name__ == "__main__":
    main()
