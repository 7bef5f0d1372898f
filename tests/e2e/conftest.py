"""The real app served by ``streamlit run`` for browser tests, and Debian's chromium driving it (Playwright).

Each test module gets its own app on a fresh state folder; a module can put saved runs in that folder's store
first by defining a ``seed_runs`` fixture (runs to save before the server starts).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from playwright.sync_api import TimeoutError as PlaywrightTimeout

from tests.e2e.serve import serve_app

REPO = Path(__file__).resolve().parents[2]
SHOTS = REPO / "artifacts" / "screenshots"
CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--disable-quic",
]
MODEL_SECONDS = 1_200_000  # ms: a whole run when other work shares the two cores
WIDTH = 1400


@pytest.fixture(scope="module")
def seed_runs() -> list:
    return []


@pytest.fixture(scope="module")
def timings(request) -> dict:
    """Figures a module measures, written to artifacts/screenshots/timings-<module>.json at its end."""
    found: dict = {}
    yield found
    SHOTS.mkdir(parents=True, exist_ok=True)
    (SHOTS / f"timings-{request.module.__name__.rsplit('.', 1)[-1]}.json").write_text(json.dumps(found, indent=1))


@pytest.fixture(scope="module")
def app(tmp_path_factory, seed_runs):
    """The app served by ``streamlit run`` from a fresh state folder: (its URL, that folder)."""
    if not CHROMIUM.exists():
        pytest.skip(f"needs Debian's chromium at {CHROMIUM} (apt-get install chromium, or `make browser`)")
    home = tmp_path_factory.mktemp("studio-home")
    if seed_runs:
        from core.store import RunStore

        store = RunStore(home / "studio.sqlite")
        for run in seed_runs:
            store.create_run(run)
            for event in run.events:
                store.append_event(event)
            store.finish_run(run)
    try:
        with serve_app(home) as (url, _):
            yield url, home
    except RuntimeError as exc:
        pytest.fail(str(exc))


@pytest.fixture(scope="module")
def page(app):
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        page = browser.new_page(viewport={"width": WIDTH, "height": 1000})
        page.set_default_timeout(60_000)
        yield page
        browser.close()


# True once the page's layout (its main block's height and each chart's width) has stayed the same for ``frames``
# animation frames in a row: a resized page has redrawn, charts included, however long that took.
LAID_OUT = """frames => {
    const main = document.querySelector('[data-testid="stMain"]');
    const charts = [...document.querySelectorAll('.js-plotly-plot .main-svg')].map(c => c.getBoundingClientRect().width);
    const now = [main ? main.scrollHeight : 0, ...charts].join();
    window.__sameLayout = now === window.__layout ? window.__sameLayout + 1 : 0;
    window.__layout = now;
    return window.__sameLayout >= frames;
}"""


def laid_out(page, frames: int = 15, most_ms: int = 1_000) -> None:
    """Wait for the page to redraw after a resize (about a quarter of a second of unchanged frames), or ``most_ms``
    on a page that keeps changing (a run streaming into it): it is shot as it is then."""
    page.evaluate("() => { window.__layout = null; window.__sameLayout = 0; }")
    try:
        page.wait_for_function(LAID_OUT, arg=frames, polling="raf", timeout=most_ms)
    except PlaywrightTimeout:
        pass


def snap(page, name: str, width: int = WIDTH) -> None:
    """The whole page: Streamlit scrolls inside its main block, so the viewport grows to fit it first."""
    SHOTS.mkdir(parents=True, exist_ok=True)
    page.set_viewport_size({"width": width, "height": 1000})
    laid_out(page)
    height = page.evaluate("document.querySelector('[data-testid=\"stMain\"]').scrollHeight")
    page.set_viewport_size({"width": width, "height": max(1000, min(height, 12000))})
    laid_out(page)
    page.screenshot(path=str(SHOTS / f"{name}.png"))
    page.set_viewport_size({"width": width, "height": 1000})


def open_page(page, url: str, title: str) -> None:
    page.goto(url)
    page.get_by_role("heading", name=title, level=1).wait_for()
    page.wait_for_load_state("networkidle")


def settle(page) -> None:
    """Wait for Streamlit's rerun after an input to finish."""
    page.wait_for_timeout(300)
    page.locator('[data-testid="stStatusWidget"]').wait_for(state="hidden", timeout=MODEL_SECONDS)


def pick(page, label: str, option: str | None = None) -> None:
    """Choose ``option`` (the first one if None) in the selectbox labelled ``label``."""
    choose(page, page.locator('[data-testid="stSelectbox"]', has_text=label), option)


def choose(page, box, option: str | None = None) -> None:
    """Open a selectbox or multiselect and click an option. A click on a box low on a long page can scroll it into
    view without opening its list; the arrow key opens it then."""
    listbox = page.get_by_role("listbox")
    for _ in range(3):  # a rerun landing between the click and the list can close it again
        settle(page)
        box.locator("input").click()
        page.wait_for_timeout(200)
        if not listbox.is_visible():
            page.keyboard.press("ArrowDown")
        try:
            listbox.wait_for(timeout=5_000)
            break
        except PlaywrightTimeout:
            continue
    (
        page.get_by_role("option").first if option is None else page.get_by_role("option", name=option, exact=True)
    ).click()
    if listbox.is_visible():  # a multiselect keeps its list open
        page.keyboard.press("Escape")
    settle(page)


# An element not marked stale. When a widget's key changes between reruns, Streamlit keeps the old one, marked stale,
# beside the new for the moment the rerun takes; a user sees it fade, a strict locator sees two.
FRESH = 'xpath=self::*[not(ancestor::*[@data-stale="true"])]'


def button(page, name: str):
    """The button named ``name`` now on screen (not the stale one a rerun is replacing)."""
    return page.get_by_role("button", name=name, exact=True).locator(FRESH)


def set_number(scope, label: str, value: int) -> None:
    box = scope.get_by_label(label, exact=True)
    box.fill(str(value))
    box.press("Enter")


def saved_runs(home: Path) -> list:
    from core.store import RunStore

    store = RunStore(home / "studio.sqlite")
    return [store.load_run(row["id"]) for row in store.list_runs()]
