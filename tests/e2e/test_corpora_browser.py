"""Settings › Corpora in the browser: the papers' corpora by name, checked against a Hub on 127.0.0.1 (the app's
``HF_ENDPOINT``, the real client), at 1440 and 1024 px."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from tests.e2e.conftest import button, new_page, open_page, pick, settle, snap
from tests.hub_server import FakeHub, HubServer
from tests.test_corpora_hub import FILES

pytestmark = pytest.mark.browser


@pytest.fixture(scope="module")
def hub():
    fake = FakeHub("MedRAG/textbooks", dict(FILES))
    with HubServer(fake) as url:
        yield fake, url


@pytest.fixture(scope="module")
def app_env(tmp_path_factory, hub):
    return {
        "MEDRAG_MODEL_DIR": str(tmp_path_factory.mktemp("no-model")),
        "MEDRAG_CORPORA_DIR": str(tmp_path_factory.mktemp("corpora")),
        "HF_ENDPOINT": hub[1],
    }


@pytest.mark.parametrize("width", [1440, 1024])
def test_checking_a_papers_corpus_shows_what_it_takes(app, browser, hub, width):
    page = new_page(browser, width)
    open_page(page, f"{app[0]}/settings", "Settings")
    page.get_by_role("tab", name="Corpora").click()
    settle(page)
    pick(page, "Corpus", "textbooks · 125,800 snippets")
    button(page, "Check what it takes").click()
    settle(page)
    plan = page.locator('[data-testid="stCode"]')
    expect(plan).to_contain_text("download: 3 files")
    expect(plan).to_contain_text("under a second at 10.0 MB/s (assumed)")
    expect(plan).to_contain_text("where: in-process index")
    expect(button(page, "Download and index textbooks")).to_be_enabled()
    page.mouse.move(0, 0)  # the button's tooltip off the plan
    plan.scroll_into_view_if_needed()
    snap(page, f"settings-papers-corpora-{width}", width)
    fetched = [path for method, path, _ in hub[0].log if method == "GET" and "/resolve/" in path]
    assert not fetched  # checking fetches nothing
    page.context.close()
