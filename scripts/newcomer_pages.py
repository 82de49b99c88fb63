"""Fetch every page of a running dashboard once in headless Chromium, open each of its tabs, and
fail on any exception a page shows (scripts/newcomer-smoke.sh; run with a Python that has
playwright, e.g. the dev install's). Usage: newcomer_pages.py URL [--chromium PATH]"""
from __future__ import annotations

import argparse
import sys
import time

from playwright.sync_api import sync_playwright

FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage"]


def _idle(page, timeout_ms: float = 120_000) -> None:
    """Until Streamlit says the page's script has run to its end."""
    page.wait_for_selector('[data-testid="stApp"][data-test-script-state="notRunning"]', timeout=timeout_ms)


def _exceptions(page) -> list[str]:
    return [e.inner_text()[:400] for e in page.locator('[data-testid="stException"]').all()]


def page_urls(page, base: str) -> list[str]:
    """The sidebar's page links, the folded ones too."""
    more = page.get_by_role("button", name="View").filter(has_text="more")
    if more.count():
        more.first.click()
        page.wait_for_timeout(300)
    hrefs = page.locator('[data-testid="stSidebarNav"] a').evaluate_all("els => els.map(e => e.href)")
    return list(dict.fromkeys([base.rstrip("/") + "/", *hrefs]))


def check(base: str, chromium: str) -> list[str]:
    problems: list[str] = []
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=chromium, args=FLAGS, chromium_sandbox=False, headless=True)
        page = browser.new_page(viewport={"width": 1400, "height": 1000})
        page.goto(base)
        _idle(page)
        urls = page_urls(page, base)
        if len(urls) < 5:
            problems.append(f"the sidebar lists only {len(urls)} page(s): {urls}")
        for url in urls:
            t0 = time.monotonic()
            page.goto(url)
            _idle(page)
            found = [f"{url}: {e}" for e in _exceptions(page)]
            tabs = page.get_by_role("tab").all()
            for tab in tabs:
                name = tab.inner_text().strip()
                tab.click()
                _idle(page)
                found += [f"{url} tab {name!r}: {e}" for e in _exceptions(page)]
            problems += found
            print(f"  {url}: {len(tabs)} tab(s), {'FAILED' if found else 'ok'} in {time.monotonic() - t0:.1f} s",
                  flush=True)
        browser.close()
    return problems


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("url")
    ap.add_argument("--chromium", default="/usr/bin/chromium")
    args = ap.parse_args()
    problems = check(args.url, args.chromium)
    for line in problems:
        print(f"newcomer-smoke: page error: {line}", file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
