"""The real app served by ``streamlit run`` for browser tests, and Debian's chromium driving it (Playwright).

Each test module gets its own app on a fresh state folder; a module can put saved runs in that folder's store
first by defining a ``seed_runs`` fixture (runs to save before the server starts), and give its app settings with
``app_env``. Its app has no embedded model unless ``app_env`` says otherwise (a module marked ``model``): every other
module runs on saved runs or a scripted endpoint. Every wait comes from ``tests/e2e/waits.py``. A failing test leaves
a screenshot of every open page and the page's state in its report.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from playwright.sync_api import TimeoutError as PlaywrightTimeout
from playwright.sync_api import expect

from tests.e2e.serve import SERVED, serve_app
from tests.e2e.waits import ms
from tests.waiting import Gate

REPO = Path(__file__).resolve().parents[2]
SHOTS = REPO / "artifacts" / "screenshots"
# Screenshots of what the tests see, for a person to look at: ``make shots`` takes them (``MEDRAG_TEST_SHOTS=1``), a
# plain ``make test`` does not (a whole-page shot at each width was a fifth of a browser module's time). A failing
# test always leaves its own (``page_state``).
TAKE_SHOTS = os.environ.get("MEDRAG_TEST_SHOTS") == "1"
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
WIDTH = 1400
BROWSERS: list = []  # the browsers open now, for the failure report

expect.set_options(timeout=ms("redraw"))


@pytest.fixture(scope="module")
def seed_runs() -> list:
    return []


@pytest.fixture(scope="module")
def app_env(tmp_path_factory) -> dict[str, str]:
    """Settings of this module's app on top of the tests' own: by default an empty model folder, so nothing here can
    start the embedded model by mistake."""
    return {"MEDRAG_MODEL_DIR": str(tmp_path_factory.mktemp("no-model"))}


@pytest.fixture(scope="module")
def gate():
    """Where this module's scripted endpoint holds its replies; opened at the module's end, so none outlives it."""
    held = Gate()
    yield held
    held.open()


def scripted_env(endpoint, no_model: Path, model: str = "scripted") -> dict[str, str]:
    """An app's settings for a scripted endpoint: its address and model, no response cache (every call reaches it),
    and an empty model folder (nothing can start the embedded model)."""
    return {
        "MEDRAG_BASE_URL": endpoint.url,
        "MEDRAG_MODEL": model,
        "MEDRAG_CACHE": "off",
        "MEDRAG_MODEL_DIR": str(no_model),
    }


@pytest.fixture(scope="module")
def timings(request) -> dict:
    """Figures a module measures, written to artifacts/screenshots/timings-<module>.json at its end."""
    found: dict = {}
    yield found
    SHOTS.mkdir(parents=True, exist_ok=True)
    (SHOTS / f"timings-{request.module.__name__.rsplit('.', 1)[-1]}.json").write_text(json.dumps(found, indent=1))


@pytest.fixture(scope="module")
def app(tmp_path_factory, seed_runs, app_env):
    """The app served by ``streamlit run`` from a fresh state folder: (its URL, that folder)."""
    if not CHROMIUM.exists():
        pytest.skip(f"needs Debian's chromium at {CHROMIUM} (apt-get install chromium, or `make browser`)")
    home = tmp_path_factory.mktemp("studio-home")
    if seed_runs:
        from core.engine.store import RunStore

        store = RunStore(home / "studio.sqlite")
        for run in seed_runs:
            store.create_run(run)
            for event in run.events:
                store.append_event(event)
            store.finish_run(run)
    try:
        with serve_app(home, app_env) as (url, _):
            yield url, home
    except RuntimeError as exc:
        pytest.fail(str(exc))


@pytest.fixture(scope="module")
def browser():
    from playwright.sync_api import sync_playwright

    if not CHROMIUM.exists():
        pytest.skip(f"needs Debian's chromium at {CHROMIUM} (apt-get install chromium, or `make browser`)")
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        BROWSERS.append(browser)
        yield browser
        BROWSERS.remove(browser)
        browser.close()


@pytest.fixture(scope="module")
def page(app, browser):
    return new_page(browser)


# Marks, in the page, when it last asked the server for a rerun, when a run last started (the page's own, or one the
# server starts itself, as a polling fragment's ``st.rerun``) and when one last finished (not cut short for another),
# reading only the top-level field numbers of Streamlit's protobuf messages (BackMsg.rerun_script = 11;
# ForwardMsg.new_session = 4, script_finished = 6, whose value 2 is "finished early for a rerun"). ``settle`` waits
# for a run started after the last ask and finished after it: a run the server had already ended when the ask left
# may report its end after the ask, and must not pass for the asked one.
RUNS_OBSERVER = """(() => {
    const runs = window.__runs = {sockets: 0, asked: 0, started: 0, finished: 0, tick: 0};
    const fields = bytes => {
        const found = new Map();
        let i = 0;
        const varint = () => {
            let value = 0, scale = 1;
            while (i < bytes.length) {
                const b = bytes[i++];
                value += (b & 127) * scale;
                scale *= 128;
                if (b < 128) break;
            }
            return value;
        };
        while (i < bytes.length) {
            const key = varint(), field = Math.floor(key / 8), type = key & 7;
            if (type === 0) found.set(field, varint());
            else if (type === 2) { const n = varint(); found.set(field, null); i += n; }
            else if (type === 1) i += 8;
            else if (type === 5) i += 4;
            else break;
        }
        return found;
    };
    const Native = window.WebSocket;
    window.WebSocket = class extends Native {
        constructor(...args) {
            super(...args);
            runs.sockets += 1;
            this.addEventListener("message", event => {
                if (!(event.data instanceof ArrayBuffer)) return;
                const message = fields(new Uint8Array(event.data));
                if (message.has(4)) runs.started = ++runs.tick;
                const finished = message.get(6);
                if (finished !== undefined && finished !== 2) runs.finished = ++runs.tick;
            });
        }
        send(data) {
            const bytes = data instanceof ArrayBuffer ? new Uint8Array(data) : ArrayBuffer.isView(data)
                ? new Uint8Array(data.buffer, data.byteOffset, data.byteLength) : null;
            if (bytes && fields(bytes).has(11)) runs.asked = ++runs.tick;
            return super.send(data);
        }
    };
})()"""

# True when the page has drawn the last run asked for or started: the server said it finished, Streamlit's running
# widget is gone and no element is left marked stale. (A page whose socket Playwright replaces is judged on the last two.)
SETTLED = """() => {
    const runs = window.__runs;
    const answered = !runs || runs.sockets === 0 || (runs.started > runs.asked && runs.finished > runs.started);
    const widget = document.querySelector('[data-testid="stStatusWidget"]');
    const running = widget && widget.getClientRects().length > 0;
    return answered && !running && !document.querySelector('[data-stale="true"]');
}"""


def new_context(browser, width: int = WIDTH, height: int = 1000):
    """A browser context (its own Streamlit session) that waits as the policy says and watches the app's reruns."""
    context = browser.new_context(viewport={"width": width, "height": height})
    context.set_default_timeout(ms("redraw"))
    context.add_init_script(RUNS_OBSERVER)
    return context


def new_page(browser, width: int = WIDTH, height: int = 1000):
    return new_context(browser, width, height).new_page()


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


def laid_out(page, frames: int = 15) -> None:
    """Wait for the page to redraw after a resize (about a quarter of a second of unchanged frames), or a glance's
    time on a page that keeps changing (a run streaming into it): it is shot as it is then."""
    # wait_for_function, not evaluate: it is bounded, and a renderer starved on a busy machine fails it by name
    page.wait_for_function("() => { window.__layout = null; window.__sameLayout = 0; return true; }")
    try:
        page.wait_for_function(LAID_OUT, arg=frames, polling="raf", timeout=ms("glance"))
    except PlaywrightTimeout:
        pass


def snap(page, name: str, width: int = WIDTH) -> None:
    """The whole page at ``width`` (which the page keeps after): Streamlit scrolls inside its main block, so the
    viewport grows to fit it first."""
    page.set_viewport_size({"width": width, "height": 1000})
    if not TAKE_SHOTS:
        return
    SHOTS.mkdir(parents=True, exist_ok=True)
    laid_out(page)
    height = page.wait_for_function(
        "() => document.querySelector('[data-testid=\"stMain\"]')?.scrollHeight"
    ).json_value()
    page.set_viewport_size({"width": width, "height": max(1000, min(height, 12000))})
    laid_out(page)
    page.screenshot(path=str(SHOTS / f"{name}.png"))
    page.set_viewport_size({"width": width, "height": 1000})


def shot(page, name: str, **options) -> None:
    """The screen as it is now (``options``: Playwright's, a ``clip``), when screenshots are taken."""
    if TAKE_SHOTS:
        SHOTS.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(SHOTS / f"{name}.png"), **options)


def open_page(page, url: str, title: str) -> None:
    page.goto(url)
    page.get_by_role("heading", name=title, level=1).wait_for()
    page.wait_for_load_state("networkidle")


# True when the element's top is in the window (a scroll to it has arrived)
ON_SCREEN = """selector => {
    const top = document.querySelector(selector)?.getBoundingClientRect().top;
    return top !== undefined && top >= -5 && top < window.innerHeight;
}"""


def follow_anchor(page, link, fragment: str) -> None:
    """Click an in-page link to ``#fragment`` and wait for the browser to go there.

    The click waits for the page to stop growing: a diagram drawn just now (Graphviz lays it out in a worker, after
    its text is in the page) still moves what is below it. A click lost to that move leaves the address without the
    fragment; it is tried again, and the last try fails naming the link."""
    target = f"#{fragment}"
    gone_there = f"() => location.hash === {json.dumps(target)}"
    for last in (False, False, True):
        laid_out(page)
        link.click()
        try:
            page.wait_for_function(gone_there, timeout=None if last else ms("glance"))
            return
        except PlaywrightTimeout as exc:
            if last:
                raise AssertionError(
                    f"three clicks on {link} did not go to {target}: the address is {page.url}"
                ) from exc


def settle(page) -> None:
    """Wait for Streamlit's rerun after an input to finish and be drawn (``SETTLED``)."""
    # every tenth of a second, not every frame: a check at the frame rate keeps chromium busy on a shared core
    page.wait_for_function(SETTLED, polling=100)


# True once a key is bound to a button: Streamlit binds a button's shortcut (hotkeys-js, ``window.hotkeys``) in an
# effect that runs after the button is drawn, which on a loaded machine can come well after the page looks settled
SHORTCUT_BOUND = "key => (window.hotkeys?.getAllKeyCodes() ?? []).some(bound => bound.shortcut === key)"


def press_shortcut(page, key: str) -> None:
    """Press a button's keyboard shortcut once the page has bound it (a key pressed before is lost)."""
    page.wait_for_function(SHORTCUT_BOUND, arg=key.lower(), polling=100)
    page.keyboard.press(key)


def pick(page, label: str, option: str | None = None) -> None:
    """Choose ``option`` (the first one if None) in the selectbox labelled ``label``."""
    choose(page, page.locator('[data-testid="stSelectbox"]', has_text=label), option)


def choose(page, box, option: str | None = None) -> None:
    """Open a selectbox or multiselect and pick ``option`` (the first one if None).

    A click focuses the box, and opens most lists; an empty box (its placeholder showing), or one the click scrolled
    into view, opens on the arrow key instead, as does a list a rerun closed again, or one that closed between being
    seen and its option's click (seen on one core: the list shown, then no option for a minute). Once focused, the
    box is only ever given the arrow key: a second click on an open list's box would close it. The option gets the
    click itself (``pick_option``), with no mouse moved over it first."""
    listbox = page.get_by_role("listbox")
    target = page.get_by_role("option").first if option is None else page.get_by_role("option", name=option, exact=True)
    settle(page)
    box.locator("input").click()
    for _ in range(3):
        try:
            listbox.wait_for(timeout=ms("glance"))
            pick_option(target, timeout=ms("glance"))
            break
        except PlaywrightTimeout:
            settle(page)
            box.locator("input").focus()
            page.keyboard.press("ArrowDown")
    else:  # the last chance, failing by name
        listbox.wait_for()
        pick_option(target)
    if listbox.is_visible():  # a multiselect keeps its list open
        page.keyboard.press("Escape")
    settle(page)


def pick_option(option, timeout: float | None = None) -> None:
    """Click an option of an open list as a tap would, without moving the mouse over it first: the list follows the
    mouse (the option under it is drawn focused), and on a busy machine Playwright's wait for a still option then
    never ends, each hover drawing the option anew (seen on one core: the first option detached and redrawn for a
    minute)."""
    option.dispatch_event("click", timeout=timeout)


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
    from core.engine.store import RunStore

    store = RunStore(home / "studio.sqlite")
    return [store.load_run(row["id"]) for row in store.list_runs()]


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item, call):
    """A failing test's report says what the browser showed: a full-page screenshot of every open page
    (artifacts/screenshots/FAILED-<test>[-n].png), each page's address and the visible text of its main block, and
    the tail of each running app's log. What it waited for, and how long, is in the failure's own message."""
    report = yield
    if report.failed and call.excinfo is not None and BROWSERS:
        try:
            report.sections.append(("browser state", page_state(item.name)))
        except Exception as exc:  # the report must come out whatever state the browser is in
            report.sections.append(("browser state", f"could not be read: {exc!r}"))
    if report.failed and call.excinfo is not None:
        for home in SERVED:
            log = home / "streamlit.log"
            tail = log.read_text(errors="replace").splitlines()[-30:] if log.exists() else []
            report.sections.append((f"app log {log}", "\n".join(tail)))
    return report


def page_state(test: str) -> str:
    SHOTS.mkdir(parents=True, exist_ok=True)
    pages = [page for browser in BROWSERS for context in browser.contexts for page in context.pages]
    lines = []
    for n, page in enumerate(pages):
        shot = SHOTS / f"FAILED-{test}{f'-{n}' if n else ''}.png"
        main = page.locator('[data-testid="stMain"]')
        try:
            height = page.evaluate("(document.querySelector('[data-testid=\"stMain\"]') || {}).scrollHeight || 0")
            page.set_viewport_size({"width": page.viewport_size["width"], "height": max(1000, min(height, 12000))})
            page.screenshot(path=str(shot), full_page=True, timeout=ms("glance"))
            text = main.inner_text(timeout=ms("glance")) if main.count() else page.inner_text("body")
        except PlaywrightTimeout as exc:
            text = f"(unreadable: {exc.message.splitlines()[0]})"
        text = " ".join(text.split())
        lines += [
            f"page {n}: {page.url}",
            f"  screenshot: {shot}",
            f"  main block: {text[:1500]}{' …' if len(text) > 1500 else ''}",
        ]
    return "\n".join(lines) or "no page open"
