"""Helpers for driving a Streamlit page in Chromium without racing its reruns."""
from __future__ import annotations

from playwright.sync_api import Error as PlaywrightError
from playwright.sync_api import Locator, Page, expect


def load_page(page: Page, url: str, ready: str) -> None:
    """Open ``url`` and wait for ``ready`` and for every script chunk of its widgets.

    Chromium aborts requests in flight when the host's network changes, which Docker does
    whenever it adds or removes a container's interface (net::ERR_NETWORK_CHANGED); the
    widgets whose chunks were dropped then show "Failed to fetch dynamically imported
    module". Such a load is retried; any other failed request fails the test."""
    for _ in range(3):
        failed: list[str] = []
        page.on("requestfailed", on_fail := lambda r: failed.append(f"{r.url}: {r.failure}"))
        page.goto(url)
        expect(page.get_by_text(ready)).to_be_visible(timeout=90_000)
        page.wait_for_load_state("networkidle")
        page.remove_listener("requestfailed", on_fail)
        if not failed:
            return
        assert all(f.endswith("net::ERR_NETWORK_CHANGED") for f in failed), failed
    raise AssertionError(f"{url}: the network kept changing while the page loaded: {failed[:3]}")


def wait_idle(page: Page, timeout: float = 60_000) -> None:
    """Wait until the script has run to its end: Streamlit marks its root element with the state."""
    expect(page.locator('[data-testid="stApp"]')).to_have_attribute(
        "data-test-script-state", "notRunning", timeout=timeout)


def open_tab(page: Page, name: str, shows: Locator, attempts: int = 3) -> None:
    """Click the tab ``name`` once the app is idle and wait for ``shows`` inside it.

    A rerun that was already on its way when the click landed (a slow, loaded machine) can
    redraw the tabs with the first one open; the click is then made again."""
    for attempt in range(attempts):
        wait_idle(page)
        page.get_by_role("tab", name=name).click()
        try:
            expect(shows).to_be_visible(timeout=15_000)
            return
        except (AssertionError, PlaywrightError):
            if attempt == attempts - 1:
                raise


def assert_text_not_cut(elements: Locator) -> None:
    """Every element shows its whole text: none is clipped by a column too narrow for it
    (a multiselect chip cut "rejected" to "cted")."""
    expect(elements.first).to_be_visible()
    cut = elements.evaluate_all("els => els.filter(e => e.scrollWidth > e.clientWidth + 1).map(e => e.innerText)")
    assert not cut, f"text cut by its box: {cut}"
